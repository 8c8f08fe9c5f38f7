/**
 * What the project's .npmrc asks of npm, checked against package-lock.json and the real npm: no
 * dependency may want a newer Node than package.json's engines.node (engine-strict turns that
 * into a failed install, where npm 11 would only warn), and the install scripts that run are the
 * reviewed ones (allow-scripts), so npm ci prints no "install scripts not yet covered" list.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { REPO } from '../helpers/install';

interface LockEntry {
  version?: string;
  engines?: { node?: string };
  hasInstallScript?: boolean;
}
const lock = JSON.parse(fs.readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const npmrc = fs.readFileSync(path.join(REPO, '.npmrc'), 'utf8');
const setting = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(npmrc)?.[1];
// npm's own semver (a dependency of the toolchain): the same reading of ranges as npm's.
const semver = createRequire(__filename)('semver') as {
  minVersion(range: string): { version: string };
  satisfies(version: string, range: string): boolean;
};
const nameOf = (key: string) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe("the project's npm policy (.npmrc)", () => {
  it('makes an engines mismatch an error, and no locked dependency wants a newer Node than engines.node', () => {
    assert.equal(setting('engine-strict'), 'true');
    const oldest = semver.minVersion(pkg.engines.node).version;
    const unhappy = Object.entries(lock.packages)
      .filter(([k, v]) => k && v.engines?.node && !semver.satisfies(oldest, v.engines.node))
      .map(([k, v]) => `${nameOf(k)}@${v.version} wants node ${v.engines!.node}`);
    assert.deepEqual(unhappy, [], `on Node ${oldest}, the oldest package.json's engines.node allows`);
  });

  it('allows exactly the install scripts of the locked packages that have one, and npm finds none unreviewed', () => {
    const allowed = (setting('allow-scripts') ?? '').split(',').filter(Boolean).sort();
    const withScripts = [
      ...new Set(
        Object.entries(lock.packages)
          .filter(([k, v]) => k && v.hasInstallScript)
          .map(([k]) => nameOf(k)),
      ),
    ].sort();
    assert.deepEqual(allowed, withScripts);
    // The real npm, reading this .npmrc from the installed tree (as from a shell, not npm run's).
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const r = spawnSync('npm', ['install-scripts', 'ls'], { cwd: REPO, env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'No packages with unreviewed install scripts.');
  });
});
