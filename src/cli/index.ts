/** Entry point of the bundled `loopx` command. */
import { run } from './main';
import { readFromTerminal } from './person';

const io = {
  stdout: (s: string) => void process.stdout.write(s),
  stderr: (s: string) => void process.stderr.write(s),
  env: process.env,
  cwd: process.cwd(),
  askTerminal: readFromTerminal,
  readStdin: async () => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of process.stdin) {
      size += (c as Buffer).length;
      if (size > 4 * 1024 * 1024) throw new Error('standard input is larger than 4 MB');
      chunks.push(c as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  },
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
