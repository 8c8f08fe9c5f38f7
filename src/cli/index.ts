/** Entry point of the bundled `loopx` command. */
import { z } from 'zod';
import { run } from './main';
import { askTerminalLine, readFromTerminal } from './person';
import { restoreCaCerts } from '../core/shim-target';

// Before anything runs a command: the environment the shim was given (shim-target.ts says why).
restoreCaCerts(process.env);

// A call parses each schema once or twice: zod's compiled fast path (built with `new Function` on
// a schema's first parse) costs more than it saves there. Long-lived processes keep it.
z.config({ jitless: true });

/**
 * A reader that went away (`loopx status | head -1`) is not our failure: the rest of the output is
 * dropped and the command still ends with its own exit code, with no stack trace.
 */
function writer(stream: NodeJS.WriteStream): (s: string) => void {
  let closed = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    closed = true;
  });
  return (s) => {
    if (!closed) stream.write(s);
  };
}

const io = {
  stdout: writer(process.stdout),
  stderr: writer(process.stderr),
  env: process.env,
  cwd: process.cwd(),
  askTerminal: readFromTerminal,
  ask: askTerminalLine,
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
