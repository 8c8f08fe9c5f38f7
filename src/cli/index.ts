/** Entry point of the bundled `loopx` command. */
import * as fs from 'node:fs';
import { z } from 'zod';
import { restoreCaCerts } from '../core/setup';
import { sleepMs } from '../core/store';
import { run } from './main';
import { askTerminalLine, readFromTerminal } from './person';

// Before anything runs a command: the environment the shim was given (shim-target.ts says why).
restoreCaCerts(process.env);

// A call parses each schema once or twice: zod's compiled fast path (built with `new Function` on
// a schema's first parse) costs more than it saves there. Long-lived processes keep it.
z.config({ jitless: true });

/**
 * Writes to a file descriptor synchronously, not through process.stdout: on a pipe (an agent,
 * `| jq`) that stream is a socket, and loading Node's `net` and streams for it is a few ms of
 * every call. A reader that went away (`loopx status | head -1`) is not our failure: the rest of
 * the output is dropped and the command still ends with its own exit code, with no stack trace.
 */
function fdWriter(fd: number): { write: (s: string) => void; closed: () => boolean } {
  let closed = false;
  const write = (s: string) => {
    let buf = Buffer.from(s, 'utf8');
    while (!closed && buf.length) {
      try {
        buf = buf.subarray(fs.writeSync(fd, buf));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // A pipe its other end made non-blocking: wait for room.
        if (code === 'EAGAIN') sleepMs(1);
        else if (code === 'EPIPE') closed = true;
        else throw e;
      }
    }
  };
  return { write, closed: () => closed };
}

/** All of standard input, read synchronously (no stream: see fdWriter), at most `max` bytes. */
function readAllStdin(max: number): string {
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const chunk = Buffer.alloc(64 * 1024);
    let n: number;
    try {
      n = fs.readSync(0, chunk, 0, chunk.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        sleepMs(1);
        continue;
      }
      throw e;
    }
    if (n === 0) break;
    size += n;
    if (size > max) throw new Error(`standard input is larger than ${max / 1024 / 1024} MB`);
    chunks.push(chunk.subarray(0, n));
  }
  return Buffer.concat(chunks).toString('utf8');
}

const stdout = fdWriter(1);
const stderr = fdWriter(2);
const io = {
  stdout: stdout.write,
  stderr: stderr.write,
  stdoutClosed: stdout.closed,
  env: process.env,
  cwd: process.cwd(),
  askTerminal: readFromTerminal,
  ask: askTerminalLine,
  readStdin: async () => readAllStdin(4 * 1024 * 1024),
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
