/**
 * Team mode: what another clone wrote into `.loopx/` is input, never authority (issue 34). Each
 * attack is made as a teammate's push or an agent outside the hooks would make it: a file put into
 * `.loopx/` by hand (a new writer's log, a copied line, an older file restored), then the BUILT CLI
 * run as the person and the agent would run it. Run `npm run build` first.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Sandbox, removeTempDirs, loopx, ok } from '../helpers/security';
import { ensurePersonKey, loopxAsPerson } from '../helpers/cli';
import { agentEvent, plantWriterLog, writerLog } from '../helpers/log-kit';

after(removeTempDirs);

const PASSPHRASE = 'correct horse battery';

/** `loopx args` in `sb` with the person's config folder `config`. */
const runIn = (sb: Sandbox, config: string, args: string[], input?: string) =>
  loopx(args, { cwd: sb.dir, env: { LOOPX_CONFIG_DIR: config }, ...(input ? { input } : {}) });

/** A workspace with goal `rel`, todo `ship` (`./deploy.sh prod`) behind gate `deploy`. */
async function releaseWorkspace(config?: string): Promise<Sandbox> {
  const sb = new Sandbox();
  const cfg = config ?? sb.config;
  ok(await runIn(sb, cfg, ['goal', 'create', '--goal-id', 'rel', '--title', 'Release', '--turns', '3']));
  ok(
    await runIn(sb, cfg, [
      'todo',
      'add',
      '--goal-id',
      'rel',
      '--todo-id',
      'ship',
      '--title',
      'Deploy',
      '--action',
      './deploy.sh prod',
      '--gate',
      'deploy',
    ]),
  );
  return sb;
}

async function makeKey(sb: Sandbox, config: string): Promise<void> {
  ok(
    await runIn(sb, config, ['key', 'create', '--name', 'alice', '--passphrase-fd', '0'], `${PASSPHRASE}\n`),
  );
}

const decide = (sb: Sandbox, config: string, verb: 'approve' | 'reject') =>
  runIn(
    sb,
    config,
    ['gate', verb, '--goal-id', 'rel', '--gate-id', 'deploy', '--passphrase-fd', '0'],
    `${PASSPHRASE}\n`,
  );

async function gateStatus(sb: Sandbox, config: string): Promise<string> {
  const r = await runIn(sb, config, ['--json', 'gate', 'list', '--goal-id', 'rel']);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { id: string; status: string }[]).find((g) => g.id === 'deploy')!.status;
}

const logLines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

const lastOfType = (file: string, type: string) =>
  logLines(file)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.type === type)
    .at(-1)!;

describe('security: another clone’s files are input, never authority', () => {
  it('finding 1: an approval copied from another workspace has no effect, and verify names it', async () => {
    // B's goal is made first, so the copy sorts after its creation, as in the review.
    const b = await releaseWorkspace();
    const config = b.config;
    const a = await releaseWorkspace(config);
    await makeKey(a, config);
    ok(await decide(a, config, 'approve'));
    assert.equal(await gateStatus(a, config), 'approved');
    const approval = lastOfType(writerLog(a.dir, 'rel'), 'gate.approved');

    // Under A's writer id, which its signature names, with seq 1 and no prev: as the review did.
    plantWriterLog(b.dir, 'rel', approval.writer as string, [approval]);
    assert.equal(await gateStatus(b, config), 'pending', 'B’s gate stays pending');
    const contract = JSON.parse(
      (await runIn(b, config, ['--json', 'quota', 'should-run', '--goal-id', 'rel'])).stdout,
    );
    assert.doesNotMatch(JSON.stringify(contract), /deploy\.sh/, 'B’s agent is not given the deploy');
    const v = await runIn(b, config, ['verify', '--goal-id', 'rel']);
    assert.match(v.stdout + v.stderr, /signed in workspace ws_[0-9a-f]{32}, not this one/);

    // Replacing B's identity with A's (pushed with the copy) changes nothing on a clone that knew B.
    fs.copyFileSync(
      path.join(a.dir, '.loopx', 'workspace.json'),
      path.join(b.dir, '.loopx', 'workspace.json'),
    );
    assert.equal(await gateStatus(b, config), 'pending', 'a copied identity does not make the copy count');
    const status = await runIn(b, config, ['verify', '--goal-id', 'rel']);
    assert.match(status.stdout + status.stderr, /first knew the workspace as ws_/);
  });

  it('finding 1: a rejection copied from another workspace does not cancel a person’s approval there', async () => {
    const b = await releaseWorkspace();
    const config = b.config;
    const a = await releaseWorkspace(config);
    await makeKey(a, config);
    ok(await decide(a, config, 'reject'));
    const rejection = lastOfType(writerLog(a.dir, 'rel'), 'gate.rejected');
    ok(await decide(b, config, 'approve'));
    plantWriterLog(b.dir, 'rel', rejection.writer as string, [rejection]);
    assert.equal(await gateStatus(b, config), 'approved', 'the person’s own approval in B stands');
  });

  it('finding 2: one event stamped in the year 9999 freezes nothing, drags nothing, and verify names its writer', async () => {
    const sb = await releaseWorkspace();
    await makeKey(sb, sb.config);
    const writer = `w${randomBytes(6).toString('hex')}`;
    plantWriterLog(sb.dir, 'rel', writer, [
      agentEvent('todo.added', '9999-12-31T23:59:59.999Z.9999', {
        todo: { id: 'late', title: 'Stamped far ahead', owner: 'agent', priority: 'P2', dependsOn: [] },
      }),
    ]);
    ok(await decide(sb, sb.config, 'approve')); // a person still approves
    ok(await runIn(sb, sb.config, ['todo', 'add', '--goal-id', 'rel', '--title', 'More']));
    ok(await runIn(sb, sb.config, ['goal', 'pause', '--goal-id', 'rel']));
    ok(await runIn(sb, sb.config, ['goal', 'resume', '--goal-id', 'rel']));
    const own = logLines(writerLog(sb.dir, 'rel')).map((l) => JSON.parse(l) as { hlc: string });
    assert.ok(own.at(-1)!.hlc < '2100', `this clone stamps by its own clock: ${own.at(-1)!.hlc}`);
    const v = await runIn(sb, sb.config, ['verify', '--goal-id', 'rel']);
    ok(v);
    assert.match(v.stdout, new RegExp(`writer ${writer}\\) is overruled: it is stamped 9999-12-31`));
    const todos = JSON.parse(
      (await runIn(sb, sb.config, ['--json', 'todo', 'list', '--goal-id', 'rel'])).stdout,
    );
    assert.ok(
      !JSON.stringify(todos).includes('Stamped far ahead'),
      'the event has no effect before its time',
    );
    ok(await runIn(sb, sb.config, ['goal', 'cancel', '--goal-id', 'rel']));
  });

  it('finding 2: a stamp a day ahead does not drag later events after it', async () => {
    const sb = await releaseWorkspace();
    const ahead = new Date(Date.now() + 24 * 3600_000).toISOString();
    plantWriterLog(sb.dir, 'rel', `w${randomBytes(6).toString('hex')}`, [
      agentEvent('goal.paused', `${ahead}.0000`, {}),
    ]);
    const status = async () =>
      (
        JSON.parse((await runIn(sb, sb.config, ['--json', 'status', '--goal-id', 'rel'])).stdout) as {
          status: string;
        }
      ).status;
    assert.equal(await status(), 'active', 'the pause waits for its time');
    ok(await runIn(sb, sb.config, ['todo', 'add', '--goal-id', 'rel', '--title', 'More']));
    const own = logLines(writerLog(sb.dir, 'rel')).map((l) => JSON.parse(l) as { hlc: string });
    assert.ok(own.at(-1)!.hlc < ahead, 'stamped by this clock, below the stamp from ahead');
  });

  it('finding 2: a line stamped before the goal was created leaves the goal readable and writable', async () => {
    const sb = await releaseWorkspace();
    plantWriterLog(sb.dir, 'rel', `w${randomBytes(6).toString('hex')}`, [
      agentEvent('goal.paused', '2000-01-01T00:00:00.000Z.0000', {}),
    ]);
    ok(await runIn(sb, sb.config, ['todo', 'add', '--goal-id', 'rel', '--title', 'More']));
    const v = await runIn(sb, sb.config, ['verify', '--goal-id', 'rel']);
    ok(v);
    assert.match(v.stdout, /before the goal was created/);
  });

  it('finding 3: a backdated goal.created by another writer does not raise the budget', async () => {
    const sb = await releaseWorkspace();
    plantWriterLog(sb.dir, 'rel', `w${randomBytes(6).toString('hex')}`, [
      agentEvent('goal.created', '2000-01-01T00:00:00.000Z.0000', {
        title: 'Release',
        objective: '',
        quota: { budgets: { turns: 1_000_000_000 }, window: { kind: 'life' }, cooldownSeconds: 0 },
        handoff: [],
      }),
    ]);
    const q = JSON.parse(
      (await runIn(sb, sb.config, ['--json', 'quota', 'show', '--goal-id', 'rel'])).stdout,
    ) as {
      budgets: { turns: { limit: number } };
    };
    assert.equal(q.budgets.turns.limit, 3, 'the person’s three turns still bind');
  });
});

describe('security: another clone’s commands are proposals here', () => {
  it('a command another writer added reaches this clone’s contract only once a person approved its review', async () => {
    const sb = new Sandbox();
    ok(await sb.run(['goal', 'create', '--goal-id', 'g', '--title', 'Work']));
    ok(
      await sb.run([
        'todo',
        'add',
        '--goal-id',
        'g',
        '--todo-id',
        'mine',
        '--title',
        'Local',
        '--action',
        'echo local',
      ]),
    );
    plantWriterLog(sb.dir, 'g', `w${randomBytes(6).toString('hex')}`, [
      agentEvent('todo.added', nextStamp(sb, 'g'), {
        todo: {
          id: 'theirs',
          title: 'Pushed by a teammate',
          owner: 'agent',
          priority: 'P0',
          dependsOn: [],
          action: 'echo pushed',
          gate: 'prod',
        },
      }),
    ]);
    let contractId = '';
    const actions = async () => {
      const r = await sb.run(['--json', 'quota', 'should-run', '--goal-id', 'g']);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as {
        interaction_contract: { id: string; cli_channel: { next_cli_actions: string[] } };
      };
      contractId = out.interaction_contract.id;
      return out.interaction_contract.cli_channel.next_cli_actions.join('\n');
    };
    const first = await actions();
    assert.match(first, /echo local/, 'this clone’s own command runs');
    assert.doesNotMatch(first, /echo pushed/, 'the pushed command is not in the contract');
    const gates = JSON.parse((await sb.run(['--json', 'gate', 'list', '--goal-id', 'g'])).stdout) as {
      id: string;
      status: string;
    }[];
    assert.deepEqual(
      gates.map((g) => [g.id, g.status]),
      [
        ['review-theirs', 'pending'],
        ['prod', 'pending'],
      ],
      'its review, and the gate it names, are asked for at once and wait for a person',
    );
    const o = sb.opts();
    await ensurePersonKey(o);
    for (const gate of ['review-theirs', 'prod'])
      ok(await loopxAsPerson(['gate', 'approve', '--goal-id', 'g', '--gate-id', gate], o));
    // The agent finishes its first contract; the next one lists the approved command.
    ok(await sb.run(['exec', '--contract', contractId, '--todo', 'mine', '--', 'echo', 'local']));
    assert.match(await actions(), /echo pushed/, 'approved, it runs here');
  });
});

describe('security: the newest signed policy wins on every clone', () => {
  const GATED = { v: 1, gatedActions: [{ pattern: './deploy.sh *', gate: 'prod' }] };

  /** `loopx policy show` in `dir` with config folder `config`: the gates in force. */
  const gatesIn = async (dir: string, config: string) => {
    const r = await loopx(['--json', 'policy', 'show'], { cwd: dir, env: { LOOPX_CONFIG_DIR: config } });
    assert.equal(r.code, 0, r.stderr);
    return JSON.stringify((JSON.parse(r.stdout) as { effective: unknown }).effective);
  };

  it('finding 4: restoring the older signed files on another clone (same machine, or a fresh one) keeps the newer policy', async () => {
    const p = new Sandbox();
    ok(await p.run(['init']));
    const o = { cwd: p.dir, env: { LOOPX_CONFIG_DIR: p.config } };
    await ensurePersonKey(o); // signs the workspace's first policy (v1)
    const v1 = ['policy.json', 'policy.signed.json'].map(
      (f) => [f, fs.readFileSync(p.file('.loopx', f))] as const,
    );
    fs.writeFileSync(p.file('.loopx', 'policy.json'), JSON.stringify(GATED, null, 2));
    ok(await loopxAsPerson(['policy', 'sign'], o));
    assert.match(await gatesIn(p.dir, p.config), /deploy\.sh/);

    // Clone Q: the committed files (never local/), at another path; then a commit restores v1's.
    const q = new Sandbox();
    fs.cpSync(p.file('.loopx'), path.join(q.dir, '.loopx'), {
      recursive: true,
      filter: (src) => !src.includes(`${path.sep}local`),
    });
    for (const [f, bytes] of v1) fs.writeFileSync(path.join(q.dir, '.loopx', f), bytes);
    assert.match(await gatesIn(q.dir, p.config), /deploy\.sh/, 'Q on the same machine keeps the gate');
    // A fresh machine: its own config folder, the person's key pinned there.
    const fresh = q.config;
    fs.cpSync(path.join(p.config, 'trusted'), path.join(fresh, 'trusted'), { recursive: true });
    assert.match(await gatesIn(q.dir, fresh), /deploy\.sh/, 'a fresh clone keeps the gate');
    // The same restore on P itself.
    for (const [f, bytes] of v1) fs.writeFileSync(p.file('.loopx', f), bytes);
    assert.match(await gatesIn(p.dir, p.config), /deploy\.sh/);
  });
});

/** A stamp just above every event of `sb`'s goal so far (a teammate's event made after them). */
function nextStamp(sb: Sandbox, goalId: string): string {
  const last = logLines(writerLog(sb.dir, goalId))
    .map((l) => (JSON.parse(l) as { hlc: string }).hlc)
    .sort()
    .at(-1)!;
  return `${last.slice(0, 24)}.${String(Number(last.slice(25)) + 1).padStart(4, '0')}`;
}
