/**
 * What the install tests share: temp folders, an environment like a fresh user's (own HOME, no
 * LOOPX_* variables, a registry that cannot be reached so nothing goes to the network), and a
 * PATH with some programs taken away (install.sh's fallbacks when unzip or python3 are missing).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '..', '..');
export const VERSION = (
  JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }
).version;

const created: string[] = [];
export function tempDir(prefix = 'loopx-install-'): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  created.push(d);
  return d;
}
export function removeTempDirs(): void {
  for (const d of created.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** The environment of a user whose home is `home`; `PATH` as given (default: this one's). */
export function userEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(LOOPX_|npm_|XDG_)/i.test(k) || k === 'LOOPX_CONFIG_DIR') env[k] = v;
  return {
    ...env,
    HOME: home,
    XDG_CACHE_HOME: path.join(home, '.cache'),
    LOOPX_CONFIG_DIR: path.join(home, '.config', 'loopx'),
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_cache: path.join(home, '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}

export function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) {
  const r = spawnSync(cmd, args, { ...opts, encoding: 'utf8', timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A PATH of one folder holding links to every program on this PATH but `hidden` (first one of
 * each name wins, as PATH lookup does).
 */
export function pathWithout(hidden: string[]): string {
  const dir = tempDir('loopx-path-');
  for (const d of (process.env.PATH ?? '').split(':')) {
    let names: string[];
    try {
      names = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      const link = path.join(dir, n);
      if (hidden.includes(n) || fs.existsSync(link)) continue;
      try {
        fs.accessSync(path.join(d, n), fs.constants.X_OK);
        fs.symlinkSync(path.join(d, n), link);
      } catch {
        /* not a program */
      }
    }
  }
  return dir;
}

/** Fails with what to install when a program the test exercises is missing. */
export function need(program: string, apt = program): void {
  const r = spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${program} is not installed: apt-get install -y ${apt}`);
}
