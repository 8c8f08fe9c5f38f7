/**
 * The V8 code cache of bin/loopx.js in the user's cache folder: one per build and Node version,
 * so old ones are pruned when a new one is written, keeping the newest few (two installs used in
 * turn keep theirs). Who may plant a cache is test/security/store-hardening.test.ts's concern.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loopx, removeTempDirs, tempDir } from '../helpers/cli';

after(removeTempDirs);

/** A cache of another build named `name` in `dir`, written `hours` ago. */
function staleCache(dir: string, name: string, hours: number): void {
  const file = path.join(dir, name);
  fs.writeFileSync(file, 'stale', { mode: 0o600 });
  const t = new Date(Date.now() - hours * 3_600_000);
  fs.utimesSync(file, t, t);
}

/** A private `<xdg>/loopx` holding `old` stale caches, the k-th one k hours old. */
function cacheFolder(old: number): { xdg: string; dir: string } {
  const xdg = tempDir('loopx-cc-');
  const dir = path.join(xdg, 'loopx');
  fs.mkdirSync(dir, { mode: 0o700 });
  for (let k = 1; k <= old; k++) staleCache(dir, `cli-${1000 + k}-0-v0.0.${k}-x64.bin`, k);
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a cache');
  return { xdg, dir };
}

const caches = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((n) => /^cli-.*\.bin$/.test(n))
    .sort();

describe('the code cache folder', () => {
  it('writing a new cache keeps it and the three newest old ones, and nothing else of the folder is touched', async () => {
    const { xdg, dir } = cacheFolder(6);
    const r = await loopx(['--version'], { cwd: xdg, env: { XDG_CACHE_HOME: xdg } });
    assert.equal(r.code, 0, r.stderr);
    const left = caches(dir);
    assert.equal(left.length, 4, `kept: ${left.join(', ')}`);
    const fresh = left.filter((n) => !n.includes('-v0.0.'));
    assert.equal(fresh.length, 1, 'the cache this call wrote is not there');
    assert.deepEqual(
      left.filter((n) => n.includes('-v0.0.')),
      ['cli-1001-0-v0.0.1-x64.bin', 'cli-1002-0-v0.0.2-x64.bin', 'cli-1003-0-v0.0.3-x64.bin'],
    );
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'not a cache');

    // A warm call writes nothing and prunes nothing.
    const before = fs.statSync(path.join(dir, fresh[0]!)).mtimeMs;
    staleCache(dir, 'cli-9-0-v0.0.9-x64.bin', 9);
    const warm = await loopx(['--version'], { cwd: xdg, env: { XDG_CACHE_HOME: xdg } });
    assert.equal(warm.code, 0, warm.stderr);
    assert.equal(caches(dir).length, 5, 'a call that used its cache pruned the folder');
    assert.equal(fs.statSync(path.join(dir, fresh[0]!)).mtimeMs, before, 'a warm call rewrote its cache');
  });

  it('a folder with few caches loses none', async () => {
    const { xdg, dir } = cacheFolder(2);
    const r = await loopx(['--version'], { cwd: xdg, env: { XDG_CACHE_HOME: xdg } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(caches(dir).length, 3);
  });
});
