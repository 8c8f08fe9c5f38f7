/**
 * The README and the docs, run as written. Every runnable shell block (```bash runnable=<name>),
 * in README.md or in any page under docs/, is run by a new user: a fresh HOME, a PATH of the
 * system's folders, `loopx` installed by each documented way in turn (the shim of
 * scripts/install.sh, the CLI tarball through npm), and the person's steps typed in a
 * pseudo-terminal. No npx, no LOOPX_* variables, no config folder set. The README itself stays a
 * front page: short, the two commands first, a link to every page of the reference.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  DOCS,
  README,
  REPO,
  allRunnableBlocks,
  block,
  docPages,
  links,
  runInTerminal,
  runScript,
  userEnv,
} from '../helpers/readme';

const PASSPHRASE = 'correct horse battery staple';
const readme = fs.readFileSync(README, 'utf8');
const blocks = allRunnableBlocks();
/** What this test does with each runnable block; a block of any other name would never run. */
const RUNS = ['install-shim', 'install-tarball', 'example', 'agent-loop'];
const version = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string })
  .version;

const made: string[] = [];
function tempDir(prefix: string): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(d);
  return d;
}
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A project as the worked example expects: `npm test` passes, `./deploy.sh` records where it deployed. */
function project(): string {
  const dir = tempDir('loopx-doc-project-');
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'payments',
      private: true,
      scripts: { test: 'node -e "console.log(\'3 tests passed\')"' },
    }),
  );
  fs.writeFileSync(path.join(dir, 'deploy.sh'), '#!/bin/sh\necho "deployed to $1" > deployed.txt\n', {
    mode: 0o755,
  });
  return dir;
}

const show = (r: { code: number; stdout?: string; stderr?: string; output?: string }) =>
  `exit ${r.code}\n${r.output ?? `--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`}`;

describe('README', () => {
  it('is a front page: at most 250 lines', () => {
    const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
    assert.ok(lines <= 250, `README.md has ${lines} lines; the reference belongs in docs/`);
  });

  it('opens with the two commands: set up and run the product, set up and run every test', () => {
    assert.ok(
      readme.startsWith(
        [
          '# LoopX for VS Code',
          '',
          '```bash',
          'npm run setup && npm start    # set up, then run LoopX in a real VS Code on a demo workspace',
          'npm run setup && npm test     # set up, then build and pass every test',
          '```',
          '',
        ].join('\n'),
      ),
      `README.md must open with its title and the two commands, as CI and the tests run them:\n${readme.slice(0, 400)}`,
    );
    const scripts = (
      JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    for (const s of ['setup', 'start', 'test']) assert.ok(scripts[s], `package.json has no "${s}" script`);
  });

  it('links every page of the reference in docs/', () => {
    const linked = new Set(
      links(readme)
        .map((l) => l.target.split('#')[0]!)
        .filter((t) => t.startsWith('docs/'))
        .map((t) => path.normalize(t)),
    );
    const pages = [
      ...fs
        .readdirSync(DOCS)
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
      'docs/capabilities/README.md',
    ];
    for (const p of pages) assert.ok(linked.has(p), `README.md does not link ${p}`);
  });

  it('marks its runnable blocks, and each is valid bash', () => {
    for (const name of RUNS) block(blocks, name);
    for (const b of blocks) {
      assert.ok(
        RUNS.includes(b.name),
        `${b.file}:${b.line} is marked runnable=${b.name}, which no test runs (known: ${RUNS.join(', ')})`,
      );
      const r = spawnSync('bash', ['-n'], { input: b.code, encoding: 'utf8' });
      assert.equal(r.status, 0, `${b.file}:${b.line} (runnable=${b.name}) is not valid bash: ${r.stderr}`);
    }
  });

  it('never sends a user to a package name we do not own (npx loopx)', () => {
    const lines = docPages().flatMap((f) =>
      fs
        .readFileSync(path.join(REPO, f), 'utf8')
        .split('\n')
        .flatMap((l, i) => (/\bnpx\s+(-\S+\s+)*loopx\b/.test(l) ? [`${f}:${i + 1}: ${l}`] : [])),
    );
    assert.deepEqual(
      lines,
      [],
      'the docs run `npx loopx`, which fetches whatever is published under that name',
    );
  });

  it('names the tarball of this version', () => {
    assert.match(
      block(blocks, 'install-tarball').code,
      new RegExp(`loopx-cli-${version.replace(/\./g, '\\.')}\\.tgz`),
    );
  });

  for (const way of ['install-shim', 'install-tarball'] as const) {
    it(`the worked example passes as written, with loopx from ${way}`, { timeout: 600_000 }, async () => {
      const home = tempDir('loopx-doc-home-');
      const prefix = path.join(home, '.npm-global');
      // npm's own settings for a user without network: the global prefix in this HOME, no audit.
      const npmOffline = {
        npm_config_prefix: prefix,
        npm_config_cache: path.join(home, '.npm'),
        npm_config_offline: 'true',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
      };
      const install = await runScript(block(blocks, way).code, {
        cwd: REPO,
        env: userEnv(home, [], npmOffline),
      });
      const installBlock = block(blocks, way);
      assert.equal(
        install.code,
        0,
        `${installBlock.file}:${installBlock.line} (${way}) failed: ${show(install)}`,
      );

      const bin = way === 'install-shim' ? path.join(home, '.local', 'bin') : path.join(prefix, 'bin');
      const env = userEnv(home, [bin]);
      const found = await runScript('command -v loopx && loopx --version', { cwd: home, env });
      assert.equal(found.code, 0, show(found));
      assert.equal(found.stdout, `${path.join(bin, 'loopx')}\n${version}\n`);

      const dir = project();
      const example = await runInTerminal(
        `${block(blocks, 'example').code}\nprintf '%s\\n' "$G" > .goal-id\n`,
        { cwd: dir, env, passphrase: PASSPHRASE },
      );
      assert.equal(example.code, 0, `the worked example failed: ${show(example)}`);
      // key create (twice: the new passphrase and again), gate approve, reward add.
      assert.equal(
        example.answered,
        4,
        `the person answered ${example.answered} prompts:\n${example.output}`,
      );
      assert.match(example.output, /3 tests passed/, 'the contract ran `npm test`');
      assert.ok(
        !fs.existsSync(path.join(dir, 'deployed.txt')),
        'the gated deploy must not run before approval',
      );

      // LoopX runs the agent: now that the gate is approved, the next contract lists the deploy.
      // Declaring the runtime is a person's signed decision: one passphrase prompt.
      const G = fs.readFileSync(path.join(dir, '.goal-id'), 'utf8').trim();
      const loop = await runInTerminal(`G=${G}\n${block(blocks, 'agent-loop').code}`, {
        cwd: dir,
        env,
        passphrase: PASSPHRASE,
      });
      assert.equal(loop.code, 0, `loopx drive failed: ${loop.output}`);
      assert.equal(loop.answered, 1, `the person answered ${loop.answered} prompts:\n${loop.output}`);
      assert.equal(fs.readFileSync(path.join(dir, 'deployed.txt'), 'utf8'), 'deployed to staging\n');

      const status = await runScript(`loopx --json status --goal-id ${G}`, { cwd: dir, env });
      assert.equal(status.code, 0, show(status));
      const doc = JSON.parse(status.stdout) as {
        status: string;
        todos: { title: string; status: string }[];
        gates: { id: string; status: string; signed?: boolean }[];
        runs: { rewards: { score: number }[]; human_reward?: { score: number; comment?: string } | null }[];
      };
      assert.deepEqual(
        doc.todos.map((t) => [t.title, t.status]),
        [
          ['Run the tests', 'done'],
          ['Deploy to staging', 'done'],
        ],
      );
      const gate = doc.gates.find((g) => g.id === 'staging');
      assert.equal(gate?.status, 'approved');
      assert.equal(gate?.signed, true, 'the approval is signed by the person’s key');
      const rewarded = doc.runs.filter((r) => r.rewards.some((w) => w.score === 0.8));
      assert.equal(rewarded.length, 1, `one run carries the person's reward: ${status.stdout}`);
      assert.equal(rewarded[0]!.human_reward?.score, 0.8);
      assert.equal(rewarded[0]!.human_reward?.comment, 'Good, add edge cases');
    });
  }
});
