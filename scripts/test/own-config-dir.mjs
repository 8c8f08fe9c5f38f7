// A LoopX config folder of the run's own (keys, pinned keys, workspace secrets), so tests and
// benchmarks never write into the user's ~/.config/loopx: a fresh temp folder unless
// LOOPX_CONFIG_DIR is already set. `env` is process.env with it; `cleanup` removes what was made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function ownConfigDir(prefix = 'loopx-config-') {
  if (process.env.LOOPX_CONFIG_DIR) return { env: { ...process.env }, cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    env: { ...process.env, LOOPX_CONFIG_DIR: dir },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
