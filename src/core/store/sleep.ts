import { forgetCheckedFolders } from './safe-path';

/** A synchronous sleep that uses no CPU: the lock's waiters and the CLI's blocked writes need one. */
let cell: Int32Array | undefined;

export function sleepMs(ms: number): void {
  // What a call checked before it slept may have changed meanwhile.
  forgetCheckedFolders();
  cell ??= new Int32Array(new SharedArrayBuffer(4));
  Atomics.wait(cell, 0, 0, ms);
}
