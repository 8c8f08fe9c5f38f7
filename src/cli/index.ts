/** Entry point of the bundled `loopx` command. */
import { run } from './main';

const io = {
  stdout: (s: string) => void process.stdout.write(s),
  stderr: (s: string) => void process.stderr.write(s),
  env: process.env,
  cwd: process.cwd(),
  interactive: !!process.stdin.isTTY,
};

run(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`loopx: unexpected error: ${(e as Error)?.stack ?? e}\n`);
    process.exitCode = 1;
  },
);
