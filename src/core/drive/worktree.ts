/**
 * The git worktrees of the driver's lanes. A lane that asks for one works in its own worktree on
 * its own branch (`loopx/<lane>`), so two agents never edit one working tree. The worktrees live
 * in `.loopx/local/worktrees/`, which git ignores (local/ has its own `.gitignore` of `*`): the
 * main checkout's `git status` stays clean, and `git clean -fdx` there leaves them alone (a folder
 * with a `.git` of its own is a nested repository, which git clean skips without a second -f).
 *
 * The goal's state stays in the main checkout's `.loopx/` (the runtime gets LOOPX_WORKSPACE), so
 * the `.loopx/` a worktree checks out is stale by design and never committed from the lane.
 *
 * Git runs without a shell and synchronously: these are a few short commands per turn.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkId, refused } from '../model';
import { shellQuote } from '../shell';
import { ensureLocalDir, mkdirStore } from '../store';

/** The branch a lane works on. */
export function laneBranch(lane: string): string {
  return `loopx/${checkId(lane, 'lane')}`;
}

/** The folder of a lane's worktree. Pure: `ensureWorktree` makes the folders and the ignore file. */
export function worktreePath(workspace: string, lane: string): string {
  return path.join(path.resolve(workspace), '.loopx', 'local', 'worktrees', checkId(lane, 'lane'));
}

export interface LaneWorktree {
  path: string;
  branch: string;
  /** False when an existing worktree was reused. */
  created: boolean;
}

/**
 * The lane's worktree, made when missing; safe to call on every turn. The workspace must be the
 * top of a git work tree with at least one commit (the new branch needs a base).
 */
export function ensureWorktree(workspace: string, lane: string): LaneWorktree {
  const top = checkTopLevel(workspace);
  const branch = laneBranch(lane);
  const localDir = path.join(top, '.loopx', 'local');
  // The ignore file comes first: a worktree made before it would show in the main checkout's status.
  ensureLocalDir(localDir);
  const parent = path.join(localDir, 'worktrees');
  // Through the store's checks: a `worktrees` link would send the checkout outside the workspace.
  mkdirStore(parent, 0o700);
  const wt = path.join(fs.realpathSync(parent), checkId(lane, 'lane'));

  const listed = listWorktrees(top).find((w) => samePath(w.path, wt));
  const present = fs.existsSync(wt);
  if (listed && present) {
    // A person who switched the worktree to another branch would have the lane's commits land
    // there, unseen by branchAhead and the bring-back todo: say so rather than carry on.
    if (listed.branch !== `refs/heads/${branch}`)
      throw refused(
        `the worktree ${wt} of lane ${lane} is on ${listed.branch ? listed.branch.replace(/^refs\/heads\//, '') : 'a detached HEAD'}, not on ${branch}: ` +
          `check out ${branch} there (git -C ${shellQuote(wt)} switch ${branch}) or remove the worktree`,
        { reason: 'worktree_off_branch', path: wt, branch, found: listed.branch ?? null },
      );
    return { path: wt, branch, created: false };
  }
  // Removed by hand: git still holds its record (and would refuse the path and the branch).
  if (listed) git(top, ['worktree', 'prune']);
  if (present && fs.readdirSync(wt).length > 0)
    throw refused(
      `${wt} exists but is not a worktree git knows: it may hold a lane's unsaved work. ` +
        `Look at it, then remove it (or run git worktree repair there) and try again`,
      { reason: 'worktree_path_taken', path: wt },
    );

  if (refExists(top, `refs/heads/${branch}`)) {
    git(top, ['worktree', 'add', '--quiet', wt, branch]);
  } else {
    if (!refExists(top, 'HEAD^{commit}'))
      throw refused(
        `the repository at ${top} has no commit yet: a lane's worktree branches from HEAD, so commit something first`,
        { reason: 'no_commits', workspace: top },
      );
    git(top, ['worktree', 'add', '--quiet', '-b', branch, wt, 'HEAD']);
  }
  return { path: wt, branch, created: true };
}

/**
 * Commits everything the lane changed in its worktree, as `author` (author and committer), and
 * returns the new commit's sha, or undefined when there was nothing to commit. The worktree's own
 * `.loopx/` is left out even when something staged it: the goal's truth is the main checkout's.
 */
export function commitTurn(
  worktree: string,
  message: string,
  author: { name: string; email: string },
): string | undefined {
  git(worktree, ['add', '--all', '--', '.', ':(exclude).loopx']);
  // An agent may have run `git add .loopx` itself; unstaging is a no-op when nothing matches.
  git(worktree, ['reset', '--quiet', '--', '.loopx']);
  if (gitStatus(worktree, ['diff', '--cached', '--quiet']) === 0) return undefined;
  // The environment outranks author.name / committer.name in the person's config, which -c
  // user.name does not; both are given so the commit is the lane's whatever the config says.
  const identity = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
  };
  git(
    worktree,
    [
      '-c',
      `user.name=${author.name}`,
      '-c',
      `user.email=${author.email}`,
      // No signing: a driver has no one to type a passphrase or touch a key.
      '-c',
      'commit.gpgsign=false',
      'commit',
      '--quiet',
      // The person's hooks are for the person's commits; a failing lint hook would stall the lane.
      '--no-verify',
      '--cleanup=verbatim',
      '--allow-empty-message',
      '-m',
      message,
    ],
    identity,
  );
  return git(worktree, ['rev-parse', 'HEAD']).trim();
}

/** How many commits `branch` has that the main checkout's HEAD has not; 0 when there is no such branch. */
export function branchAhead(workspace: string, branch: string): number {
  const ref = `refs/heads/${branch}`;
  if (!refExists(workspace, ref)) return 0;
  // An unborn HEAD (a branch made another way in an empty repository): every commit is ahead.
  const range = refExists(workspace, 'HEAD^{commit}') ? `HEAD..${ref}` : ref;
  return Number(git(workspace, ['rev-list', '--count', range]).trim());
}

/** The remote a lane's branch is pushed to: `origin` when there is one, else the first; undefined when none. */
export function hasRemote(workspace: string): string | undefined {
  const names = git(workspace, ['remote'])
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  return names.includes('origin') ? 'origin' : names[0];
}

/**
 * The one shell command that brings a lane's branch back, for a todo behind a person's gate. With
 * no remote it merges into whatever the main checkout has checked out (a merge commit, so the
 * lane's work stays one visible unit); with one it only pushes the branch: opening a pull request
 * is the person's call and needs their forge's tooling, which LoopX does not assume.
 */
export function bringBackCommand(workspace: string, branch: string, remote?: string): string {
  const ws = shellQuote(path.resolve(workspace));
  return remote
    ? `git -C ${ws} push ${shellQuote(remote)} ${shellQuote(branch)}`
    : `git -C ${ws} merge --no-ff --no-edit ${shellQuote(branch)}`;
}

/**
 * Removes the lane's worktree, uncommitted changes and all (the caller decides when that is due),
 * and keeps the branch: its commits may not be brought back yet. Nothing to do is not an error.
 */
export function removeWorktree(workspace: string, lane: string): void {
  const top = checkTopLevel(workspace);
  const wt = worktreePath(top, lane);
  const parent = path.dirname(wt);
  const real = fs.existsSync(parent) ? path.join(fs.realpathSync(parent), lane) : wt;
  const listed = listWorktrees(top).find((w) => samePath(w.path, real) || samePath(w.path, wt));
  if (!listed) return;
  if (fs.existsSync(listed.path)) git(top, ['worktree', 'remove', '--force', listed.path]);
  else git(top, ['worktree', 'prune']);
}

// ---- running git ----

/** The environment git runs in: nothing a calling hook set (GIT_DIR, GIT_INDEX_FILE...) redirects it. */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_')) delete env[k];
  // A push or fetch that wants a password must fail, not wait for a terminal no one watches.
  return { ...env, GIT_TERMINAL_PROMPT: '0', ...extra };
}

function run(cwd: string, args: string[], extra?: Record<string, string>) {
  const r = spawnSync('git', args, { cwd, env: gitEnv(extra), encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.error)
    throw refused(`could not run git ${args.join(' ')} in ${cwd}: ${r.error.message}`, {
      reason: 'git_failed',
      command: ['git', ...args],
      cwd,
    });
  return r;
}

function failed(cwd: string, args: string[], status: number | null, stderr: string) {
  const err = stderr.trim().slice(-500);
  return refused(
    `git ${args.join(' ')} failed in ${cwd} (${status === null ? 'killed' : `exit ${status}`})${err ? `: ${err}` : ''}`,
    { reason: 'git_failed', command: ['git', ...args], cwd, status, stderr: err },
  );
}

/** Runs git and returns its output; any exit but 0 throws. */
function git(cwd: string, args: string[], extra?: Record<string, string>): string {
  const r = run(cwd, args, extra);
  if (r.status !== 0) throw failed(cwd, args, r.status, r.stderr);
  return r.stdout;
}

/** For the commands that answer yes/no by exit code: 0 or 1, anything else throws. */
function gitStatus(cwd: string, args: string[]): 0 | 1 {
  const r = run(cwd, args);
  if (r.status === 0 || r.status === 1) return r.status;
  throw failed(cwd, args, r.status, r.stderr);
}

function refExists(cwd: string, ref: string): boolean {
  return gitStatus(cwd, ['rev-parse', '--verify', '--quiet', ref]) === 0;
}

/** The workspace, resolved, when it is the top of a git work tree; else a refusal that says so. */
function checkTopLevel(workspace: string): string {
  const ws = path.resolve(workspace);
  const notRepo = (why: string) =>
    refused(`${ws} is not the top of a git work tree (${why}): a lane's worktree needs a git repository`, {
      reason: 'not_a_git_repository',
      workspace: ws,
    });
  if (!fs.existsSync(ws) || !fs.statSync(ws).isDirectory()) throw notRepo('no such folder');
  const r = run(ws, ['rev-parse', '--show-toplevel']);
  if (r.status !== 0) throw notRepo(r.stderr.trim().slice(-200) || 'git rev-parse failed');
  const top = r.stdout.trim();
  if (!samePath(top, ws)) throw notRepo(`the work tree's top is ${top}`);
  return ws;
}

interface Listed {
  path: string;
  /** `refs/heads/...`, or undefined for a detached HEAD. */
  branch?: string;
}

/** The worktrees git knows of (`git worktree list --porcelain`: blocks of `key value` lines). */
function listWorktrees(top: string): Listed[] {
  const out: Listed[] = [];
  let last: Listed | undefined;
  for (const line of git(top, ['worktree', 'list', '--porcelain']).split('\n')) {
    if (line.startsWith('worktree ')) out.push((last = { path: line.slice('worktree '.length) }));
    else if (line.startsWith('branch ') && last) last.branch = line.slice('branch '.length);
  }
  return out;
}

/** Whether two paths name one folder: git prints them resolved (and with `/` on Windows). */
function samePath(a: string, b: string): boolean {
  const norm = (p: string) => {
    let r = path.resolve(p);
    try {
      r = fs.realpathSync.native(r);
    } catch {
      // A missing folder (a worktree removed by hand) compares as written.
    }
    return process.platform === 'win32' ? r.toLowerCase() : r;
  };
  return norm(a) === norm(b);
}
