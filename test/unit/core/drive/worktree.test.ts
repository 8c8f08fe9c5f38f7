/** The lanes' git worktrees (core/drive/worktree.ts), against real git in temp folders. */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  branchAhead,
  bringBackCommand,
  commitTurn,
  ensureWorktree,
  hasRemote,
  laneBranch,
  removeWorktree,
  worktreePath,
} from '../../../../src/core/drive/worktree';
import { LoopxError } from '../../../../src/core/model';

const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-worktree-'));
after(() => fs.rmSync(ROOT, { recursive: true, force: true }));

const AUTHOR = { name: 'LoopX lane', email: 'lane@loopx.invalid' };

const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_'))) as NodeJS.ProcessEnv;

/** Runs git as a person would (their identity given), failing the test on any error. */
function git(cwd: string, ...args: string[]): string {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args],
    {
      cwd,
      env: cleanEnv(),
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

let n = 0;
/** A fresh repository on `main` with one commit (and, when asked, a committed `.loopx/`). */
function repo(name = `repo-${++n}`, opts: { loopx?: boolean } = {}): string {
  const dir = path.join(ROOT, name);
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'README.md'), 'hello\n');
  if (opts.loopx) {
    fs.mkdirSync(path.join(dir, '.loopx', 'goals'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.loopx', 'goals', 'goal.json'), '{"v":1}\n');
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'first');
  return dir;
}

/** Runs a todo's action as the executor does: one string for /bin/sh. */
function sh(command: string): void {
  const r = spawnSync('/bin/sh', ['-c', command], {
    env: {
      ...cleanEnv(),
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `${command}: ${r.stderr}`);
}

function refusal(fn: () => unknown, reason: string): LoopxError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof LoopxError, `expected a LoopxError (${reason}), got ${String(caught)}`);
  assert.equal(caught.reason, reason, caught.message);
  return caught;
}

describe('names of lanes in git', () => {
  it('a lane works on loopx/<lane> in .loopx/local/worktrees/<lane>', () => {
    assert.equal(laneBranch('fix-login'), 'loopx/fix-login');
    assert.equal(worktreePath('/w/s', 'fix-login'), path.resolve('/w/s/.loopx/local/worktrees/fix-login'));
  });
  it('a lane name that could leave the worktrees folder is refused', () => {
    refusal(() => worktreePath('/w', '../x'), 'usage');
    refusal(() => laneBranch('a b'), 'usage');
  });
});

describe('two lanes in two worktrees', () => {
  const ws = repo();
  const a = ensureWorktree(ws, 'lane-a');
  const b = ensureWorktree(ws, 'lane-b');

  it('each lane gets its own worktree on its own branch, inside .loopx/local/', () => {
    assert.equal(a.created, true);
    assert.equal(b.created, true);
    assert.equal(a.branch, 'loopx/lane-a');
    assert.equal(b.branch, 'loopx/lane-b');
    assert.notEqual(a.path, b.path);
    assert.equal(git(a.path, 'rev-parse', '--abbrev-ref', 'HEAD'), 'loopx/lane-a');
    assert.equal(git(b.path, 'rev-parse', '--abbrev-ref', 'HEAD'), 'loopx/lane-b');
    assert.equal(fs.realpathSync(a.path), fs.realpathSync(worktreePath(ws, 'lane-a')));
    assert.equal(
      fs.readFileSync(path.join(ws, '.loopx', 'local', '.gitignore'), 'utf8'),
      '# Machine-local: writer id, locks, caches. Never commit.\n*\n',
    );
  });

  it('the main checkout stays clean with worktrees and their changes inside it', () => {
    fs.writeFileSync(path.join(a.path, 'a.txt'), 'from lane a\n');
    fs.writeFileSync(path.join(b.path, 'b.txt'), 'from lane b\n');
    assert.equal(git(ws, 'status', '--porcelain', '--untracked-files=all'), '');
  });

  it("commits each lane's turn with the lane's identity, and counts what each branch has ahead", () => {
    assert.equal(branchAhead(ws, a.branch), 0);
    const shaA = commitTurn(a.path, 'lane a: add a.txt', AUTHOR);
    const shaB = commitTurn(b.path, 'lane b: add b.txt', AUTHOR);
    assert.match(shaA ?? '', /^[0-9a-f]{40}$/);
    assert.match(shaB ?? '', /^[0-9a-f]{40}$/);
    assert.equal(git(ws, 'rev-parse', a.branch), shaA);
    assert.equal(git(ws, 'rev-parse', b.branch), shaB);
    assert.equal(
      git(a.path, 'log', '-1', '--format=%an|%ae|%cn|%ce|%s'),
      'LoopX lane|lane@loopx.invalid|LoopX lane|lane@loopx.invalid|lane a: add a.txt',
    );
    assert.equal(branchAhead(ws, a.branch), 1);
    assert.equal(branchAhead(ws, b.branch), 1);
    assert.equal(branchAhead(ws, 'loopx/no-such-lane'), 0);
    assert.equal(git(ws, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'the main checkout did not move');
    assert.equal(git(ws, 'status', '--porcelain', '--untracked-files=all'), '');
  });

  it('a turn with nothing changed commits nothing', () => {
    assert.equal(commitTurn(a.path, 'nothing', AUTHOR), undefined);
    assert.equal(branchAhead(ws, a.branch), 1);
  });

  it("the two bring-back commands, run one after the other, merge both lanes' work", () => {
    assert.equal(hasRemote(ws), undefined);
    const cmdA = bringBackCommand(ws, a.branch);
    const cmdB = bringBackCommand(ws, b.branch, hasRemote(ws));
    assert.match(cmdA, /merge --no-ff --no-edit loopx\/lane-a$/);
    sh(cmdA);
    sh(cmdB);
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'from lane a\n');
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'from lane b\n');
    assert.equal(branchAhead(ws, a.branch), 0);
    assert.equal(branchAhead(ws, b.branch), 0);
    assert.equal(git(ws, 'status', '--porcelain', '--untracked-files=all'), '');
  });
});

describe('ensureWorktree on every turn', () => {
  it('reuses the worktree it made', () => {
    const ws = repo();
    const first = ensureWorktree(ws, 'l');
    fs.writeFileSync(path.join(first.path, 'work.txt'), 'unsaved\n');
    const again = ensureWorktree(ws, 'l');
    assert.deepEqual(again, { ...first, created: false });
    assert.equal(fs.readFileSync(path.join(again.path, 'work.txt'), 'utf8'), 'unsaved\n');
  });

  it('makes a worktree removed by hand again, on the branch that kept its commits', () => {
    const ws = repo();
    const first = ensureWorktree(ws, 'l');
    fs.writeFileSync(path.join(first.path, 'kept.txt'), 'committed\n');
    const sha = commitTurn(first.path, 'keep', AUTHOR);
    fs.rmSync(first.path, { recursive: true, force: true });
    const again = ensureWorktree(ws, 'l');
    assert.equal(again.created, true);
    assert.equal(git(again.path, 'rev-parse', 'HEAD'), sha);
    assert.equal(fs.readFileSync(path.join(again.path, 'kept.txt'), 'utf8'), 'committed\n');
    assert.equal(
      git(ws, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      2,
    );
  });

  it('refuses a folder in its place that git does not know (it may hold work)', () => {
    const ws = repo();
    const p = worktreePath(ws, 'l');
    fs.mkdirSync(p, { recursive: true });
    fs.writeFileSync(path.join(p, 'stray.txt'), 'x');
    refusal(() => ensureWorktree(ws, 'l'), 'worktree_path_taken');
    assert.equal(fs.readFileSync(path.join(p, 'stray.txt'), 'utf8'), 'x');
  });

  it('refuses a worktree a person switched to another branch', () => {
    const ws = repo();
    const wt = ensureWorktree(ws, 'l');
    git(wt.path, 'switch', '-q', '-c', 'elsewhere');
    refusal(() => ensureWorktree(ws, 'l'), 'worktree_off_branch');
  });

  it('refuses a folder that is not a repository, or not its top, and a repository with no commit', () => {
    const plain = path.join(ROOT, 'plain');
    fs.mkdirSync(plain);
    refusal(() => ensureWorktree(plain, 'l'), 'not_a_git_repository');
    refusal(() => ensureWorktree(path.join(ROOT, 'missing'), 'l'), 'not_a_git_repository');
    const ws = repo();
    fs.mkdirSync(path.join(ws, 'sub'));
    refusal(() => ensureWorktree(path.join(ws, 'sub'), 'l'), 'not_a_git_repository');
    const empty = path.join(ROOT, 'empty');
    fs.mkdirSync(empty);
    git(empty, 'init', '-q', '-b', 'main');
    refusal(() => ensureWorktree(empty, 'l'), 'no_commits');
  });

  it('is not redirected by GIT_DIR and GIT_INDEX_FILE inherited from a git hook', () => {
    const ws = repo();
    const decoy = repo();
    const saved = { dir: process.env.GIT_DIR, index: process.env.GIT_INDEX_FILE };
    process.env.GIT_DIR = path.join(decoy, '.git');
    process.env.GIT_INDEX_FILE = path.join(decoy, '.git', 'index');
    try {
      const wt = ensureWorktree(ws, 'l');
      fs.writeFileSync(path.join(wt.path, 'x.txt'), 'x\n');
      assert.ok(commitTurn(wt.path, 'x', AUTHOR));
      assert.equal(branchAhead(ws, wt.branch), 1);
    } finally {
      if (saved.dir === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved.dir;
      if (saved.index === undefined) delete process.env.GIT_INDEX_FILE;
      else process.env.GIT_INDEX_FILE = saved.index;
    }
    assert.equal(git(decoy, 'branch', '--list', 'loopx/*'), '', 'nothing was made in the other repository');
    assert.equal(git(decoy, 'status', '--porcelain'), '');
  });
});

describe("a lane's commits leave the worktree's .loopx/ alone", () => {
  it('never commits the stale goal state a worktree checks out, even when it was staged', () => {
    const ws = repo(undefined, { loopx: true });
    const wt = ensureWorktree(ws, 'l');
    const goal = path.join(wt.path, '.loopx', 'goals', 'goal.json');
    fs.writeFileSync(goal, '{"v":2}\n');
    fs.writeFileSync(path.join(wt.path, '.loopx', 'goals', 'new.json'), '{}\n');
    assert.equal(commitTurn(wt.path, 'only .loopx', AUTHOR), undefined);

    git(wt.path, 'add', '.loopx');
    fs.writeFileSync(path.join(wt.path, 'code.ts'), 'export {};\n');
    const sha = commitTurn(wt.path, 'code', AUTHOR);
    assert.ok(sha);
    assert.equal(git(wt.path, 'show', '--name-only', '--format=', sha), 'code.ts');
    assert.equal(fs.readFileSync(goal, 'utf8'), '{"v":2}\n', "the worktree's file is left as it was");
  });
});

describe('a workspace path with a space and a quote', () => {
  it('makes, commits and merges back through one shell word', () => {
    const ws = repo("my work's tree");
    const wt = ensureWorktree(ws, 'l');
    fs.writeFileSync(path.join(wt.path, 'q.txt'), 'quoted\n');
    assert.ok(commitTurn(wt.path, "it's done", AUTHOR));
    assert.equal(branchAhead(ws, wt.branch), 1);
    sh(bringBackCommand(ws, wt.branch));
    assert.equal(fs.readFileSync(path.join(ws, 'q.txt'), 'utf8'), 'quoted\n');
    assert.equal(git(ws, 'status', '--porcelain', '--untracked-files=all'), '');
  });
});

describe('a repository with a remote', () => {
  it('names the remote, origin first, and the bring-back command pushes the branch there', () => {
    const ws = repo();
    const bare = path.join(ROOT, `bare-${++n}.git`);
    git(ROOT, 'init', '-q', '--bare', bare);
    git(ws, 'remote', 'add', 'backup', path.join(ROOT, 'nowhere.git'));
    assert.equal(hasRemote(ws), 'backup');
    git(ws, 'remote', 'add', 'origin', bare);
    assert.equal(hasRemote(ws), 'origin');

    const wt = ensureWorktree(ws, 'l');
    fs.writeFileSync(path.join(wt.path, 'r.txt'), 'pushed\n');
    const sha = commitTurn(wt.path, 'push me', AUTHOR);
    const cmd = bringBackCommand(ws, wt.branch, hasRemote(ws));
    assert.match(cmd, / push origin loopx\/l$/);
    sh(cmd);
    assert.equal(git(bare, 'rev-parse', 'refs/heads/loopx/l'), sha);
    assert.equal(git(ws, 'rev-parse', 'main'), git(ws, 'rev-parse', 'HEAD'), 'main did not move');
    assert.equal(fs.existsSync(path.join(ws, 'r.txt')), false, 'pushing merges nothing');
  });
});

describe('removing a worktree', () => {
  it('removes the folder even with unsaved changes, keeps the branch, and is idempotent', () => {
    const ws = repo();
    const wt = ensureWorktree(ws, 'l');
    fs.writeFileSync(path.join(wt.path, 'c.txt'), 'c\n');
    const sha = commitTurn(wt.path, 'c', AUTHOR);
    fs.writeFileSync(path.join(wt.path, 'dirty.txt'), 'unsaved\n');
    removeWorktree(ws, 'l');
    assert.equal(fs.existsSync(wt.path), false);
    assert.equal(git(ws, 'rev-parse', wt.branch), sha);
    assert.equal(branchAhead(ws, wt.branch), 1);
    removeWorktree(ws, 'l');
    assert.equal(ensureWorktree(ws, 'l').created, true, 'a lane can come back to its branch');
  });
});

describe('git failing', () => {
  it('is a LoopxError naming the command and what git said', () => {
    const plain = path.join(ROOT, 'plain-2');
    fs.mkdirSync(plain);
    const e = refusal(() => branchAhead(plain, 'loopx/l'), 'git_failed');
    assert.match(e.message, /git rev-parse --verify --quiet refs\/heads\/loopx\/l/);
    assert.match(e.message, /not a git repository/i);
    assert.equal(e.kind, 'refused');
  });
});
