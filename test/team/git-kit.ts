/**
 * What the team test shares: real git (the `git` binary, isolated from the machine's own git
 * configuration), clones of one bare repository that each run the BUILT `loopx`, and a small
 * seeded PRNG so that a run can be replayed from its printed seed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import { json, loopx, loopxAsPerson, loopxOnPath, sh, show } from '../helpers/cli';
import type { Result } from '../helpers/cli';
import { rng } from '../helpers/rng';

export type { Result } from '../helpers/cli';

// ---------------------------------------------------------------------------------------------
// A small deterministic PRNG (mulberry32)

export class Prng {
  /** A float in [0, 1). */
  readonly next: () => number;
  constructor(readonly seed: number) {
    this.next = rng(seed);
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    assert.ok(xs.length > 0, 'pick from an empty list');
    return xs[this.int(0, xs.length - 1)]!;
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// git

/**
 * git without the machine's global or system configuration (no hooks, aliases or pull settings of
 * the developer leak in), never prompting, with English messages (the test reads `CONFLICT`).
 */
const GIT_ENV: Record<string, string> = {
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  LC_ALL: 'C',
  LANG: 'C',
};

/**
 * Runs `git args...` in `cwd`. A missing `git` rejects (spawn ENOENT), which fails the test:
 * this test is about git, so it never skips.
 */
export function git(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: { ...process.env, ...GIT_ENV, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run git ${args.join(' ')}: ${e.message} (this test needs the git binary)`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr });
    });
    child.stdin.end();
  });
}

/** `git args...` that must exit 0; its stdout, trimmed. */
export async function gitOk(args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const r = await git(args, cwd, env);
  assert.equal(r.code, 0, `git ${args.join(' ')} in ${cwd}: ${show(r)}`);
  return r.stdout.trim();
}

/** What one pull did to the clone's history. */
export interface PullOutcome {
  mode: PullMode;
  /** A merge commit was made (`--no-rebase`, or plain pull with pull.rebase=false, on a diverged branch). */
  merged: boolean;
  /** Local commits were replayed on the fetched ones (`--rebase`, or plain pull with pull.rebase=true). */
  rebased: boolean;
  fastForward: boolean;
}

/** `''` is a plain `git pull`, which follows the clone's own `pull.rebase`. */
export type PullMode = '' | '--rebase' | '--no-rebase';

// ---------------------------------------------------------------------------------------------
// A clone of the team's repository

export class Clone {
  constructor(
    /** A, B, C (or the first clone, "seed"). */
    readonly name: string,
    readonly dir: string,
    /** Who commits in this clone. */
    readonly author: { name: string; email: string },
    /** The agent that works in this clone (LOOPX_AGENT). */
    readonly agent: string,
  ) {}

  private gitEnv(): Record<string, string> {
    return {
      GIT_AUTHOR_NAME: this.author.name,
      GIT_AUTHOR_EMAIL: this.author.email,
      GIT_COMMITTER_NAME: this.author.name,
      GIT_COMMITTER_EMAIL: this.author.email,
    };
  }

  git(...args: string[]): Promise<Result> {
    return git(args, this.dir, this.gitEnv());
  }

  gitOk(...args: string[]): Promise<string> {
    return gitOk(args, this.dir, this.gitEnv());
  }

  /** `loopx args...` in this clone, as a script or (with LOOPX_AGENT in env) an agent. */
  loopx(args: string[], env: Record<string, string> = {}): Promise<Result> {
    return loopx(args, { cwd: this.dir, env });
  }

  /** `loopx args...` as this clone's agent. */
  asAgent(args: string[]): Promise<Result> {
    return this.loopx(args, { LOOPX_AGENT: this.agent });
  }

  /** `loopx --json args...` (stdout checked against `schema`), with `env` added. */
  async json<S extends z.ZodType>(
    schema: S,
    args: string[],
    env: Record<string, string> = {},
  ): Promise<z.infer<S>> {
    return json(await this.loopx(['--json', ...args], env), schema);
  }

  /** A person's signed decision in this clone (the passphrase on fd 3). */
  person(args: string[]): Promise<Result> {
    return loopxAsPerson(args, { cwd: this.dir });
  }

  /** A command line run by `/bin/sh -c` with the built `loopx` first on PATH, as an executor evals it. */
  shell(command: string, env: Record<string, string> = {}): Promise<Result> {
    return sh(command, {
      cwd: this.dir,
      env: { PATH: `${loopxOnPath()}:${process.env.PATH ?? ''}`, ...env },
    });
  }

  /** This clone's writer id, or undefined before its first write. */
  writerId(): string | undefined {
    const f = path.join(this.dir, '.loopx', 'local', 'writer-id');
    return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim() : undefined;
  }

  /** `git status --porcelain` with every untracked file listed, as lines. */
  async status(): Promise<string[]> {
    const out = await this.gitOk('status', '--porcelain', '--untracked-files=all');
    return out ? out.split('\n') : [];
  }

  /** Nothing under `.loopx/local` ever shows in `git status` (it is machine-local, never committed). */
  async assertLocalHidden(when: string): Promise<void> {
    const lines = await this.status();
    const local = lines.filter((l) => l.includes('.loopx/local'));
    assert.deepEqual(
      local,
      [],
      `${this.name} (${when}): git status shows .loopx/local:\n${lines.join('\n')}`,
    );
  }

  /**
   * Commits `.loopx` (after checking `.loopx/local` stays out of it), as a teammate does after a
   * round of work; false when the round changed nothing. The tree is clean after.
   */
  async commit(message: string): Promise<boolean> {
    await this.assertLocalHidden(`before commit "${message}"`);
    await this.gitOk('add', '-A', '.loopx');
    const staged = await this.gitOk('diff', '--cached', '--name-only');
    if (!staged) return false;
    assert.deepEqual(
      staged.split('\n').filter((f) => !f.startsWith('.loopx/') || f.startsWith('.loopx/local')),
      [],
      `${this.name}: "${message}" stages files outside .loopx or under .loopx/local:\n${staged}`,
    );
    await this.gitOk('commit', '-q', '-m', message);
    assert.deepEqual(await this.status(), [], `${this.name}: the tree is not clean after "${message}"`);
    return true;
  }

  /** A pull that must succeed without a conflict; says what it did to the history. */
  async pull(mode: PullMode): Promise<PullOutcome> {
    const before = await this.gitOk('rev-parse', 'HEAD');
    const r = await this.git('pull', ...(mode ? [mode] : []));
    const what = `${this.name}: git pull ${mode}`;
    assert.equal(r.code, 0, `${what}: ${show(r)}`);
    assert.doesNotMatch(r.stdout + r.stderr, /CONFLICT/, `${what}: ${show(r)}`);
    assert.deepEqual(await this.status(), [], `${what} left the tree unclean`);
    const after = await this.gitOk('rev-parse', 'HEAD');
    // A merge this pull made: two parents, the first our old head, committed by us (a fast-forward
    // to a teammate's merge commit is not one).
    const [, firstParent, ...others] = (await this.gitOk('rev-list', '--parents', '-n', '1', 'HEAD')).split(
      ' ',
    );
    const committer = await this.gitOk('log', '-1', '--format=%cn');
    const kept = (await this.git('merge-base', '--is-ancestor', before, after)).code === 0;
    const merged =
      after !== before && others.length === 1 && firstParent === before && committer === this.author.name;
    return {
      mode,
      merged,
      rebased: after !== before && !kept,
      fastForward: after !== before && kept && !merged,
    };
  }

  async push(): Promise<void> {
    const r = await this.git('push', '-q');
    assert.equal(r.code, 0, `${this.name}: git push: ${show(r)}`);
    assert.doesNotMatch(r.stdout + r.stderr, /CONFLICT|rejected/, `${this.name}: git push: ${show(r)}`);
  }
}

/** The todo id of a contract's command line `loopx exec --contract C --todo T -- ...`. */
export function todoOf(command: string): string {
  const m = /--todo (\S+) --/.exec(command);
  assert.ok(m, `not a contract action: ${command}`);
  return m[1]!;
}

/** The evidence id `loopx exec` reports on stderr ("...; evidence ev-...; todo T done"). */
export function evidenceOf(r: Result): string {
  const m = /evidence (ev-[A-Za-z0-9_-]+)/.exec(r.stderr);
  assert.ok(m, `exec reported no evidence id: ${show(r)}`);
  return m[1]!;
}
