/**
 * What the Goals tree's rows say (src/extension/views/rowText.ts, recordRowText.ts): the label
 * says the important thing, the description a word or two, and ids, commands and exact times are
 * in the tooltip. The state is made with the real capabilities on a store with a fixed clock.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { invoke } from '../../../../src/core/capabilities/registry';
import { LoopxError } from '../../../../src/core/model';
import type { GoalState } from '../../../../src/core/model';
import type { IndexEntry } from '../../../../src/core/store/goal-index';
import { indexEntryOf } from '../../../../src/core/store/goal-index';
import type { Store } from '../../../../src/core/store/store';
import { invalidPolicyStatus } from '../../../../src/core/views/policy-advice';
import { localDateTime, whenText } from '../../../../src/core/views/when-text';
import type { RowText, TipBlock } from '../../../../src/extension/views/rowText';
import { gateName, gateRow, goalRow, groupRow, todoRow } from '../../../../src/extension/views/rowText';
import {
  evidenceRow,
  invalidPolicyRow,
  runRow,
  unsignedPolicyRow,
} from '../../../../src/extension/views/recordRowText';
import { goalFixture, quota } from '../../../helpers/contract-kit';
import { agent, human, removeTempDirs, signed } from '../../../helpers/store';

after(removeTempDirs);

/** The tooltip as the words a person reads, one block a line. */
const tipText = (t: TipBlock[]) =>
  t.map((b) => ('code' in b ? `$ ${b.code}` : [b.bold, b.text].filter(Boolean).join(' '))).join('\n');

const state = (store: Store, goalId: string): GoalState => store.load(goalId).state;
const entry = (g: GoalState): IndexEntry => indexEntryOf(g);
/** The reader's clock: five minutes after the fixture's clock. */
const nowOf = (store: Store) => Date.parse(store.now()) + 5 * 60_000;

/** A goal with todos for an agent and a person, a gated deploy, one finished run with evidence. */
function workedGoal() {
  const f = goalFixture({ quota: quota({ turns: 20, costUsd: 5 }) });
  const { store, goalId } = f;
  const add = (input: Record<string, unknown>, who = human) =>
    invoke(store, 'todo.add', { goalId, ...input }, who);
  add({ todoId: 'tests', title: 'Run the tests', priority: 'P1', action: 'npm test' });
  add({ todoId: 'docs', title: 'Review the docs', owner: 'user', priority: 'P2' });
  add({ todoId: 'ship', title: 'Deploy to staging', action: 'sh deploy.sh', gate: 'staging' });
  invoke(store, 'run.start', { goalId, runId: 'run-7f3a', agent: 'codex' }, agent);
  invoke(
    store,
    'evidence.add',
    {
      goalId,
      runId: 'run-7f3a',
      todoId: 'tests',
      kind: 'command',
      command: 'npm test',
      summary: 'exit 0 in 0.07 s',
      exitCode: 0,
      durationMs: 70,
    },
    agent,
  );
  invoke(store, 'todo.complete', { goalId, todoId: 'tests' }, agent);
  invoke(store, 'run.end', { goalId, runId: 'run-7f3a', outcome: 'succeeded', costUsd: 0.21 }, agent);
  invoke(
    store,
    'reward.add',
    { goalId, runId: 'run-7f3a', score: 0.8, comment: 'good' },
    human,
    signed(store),
  );
  return f;
}

describe('the goal row', () => {
  it('says in words what an empty goal is, not 0/0', () => {
    const { store, goalId } = goalFixture();
    const g = state(store, goalId);
    const row = goalRow(entry(g), g, nowOf(store));
    assert.deepEqual([row.label, row.description], ['A goal', 'no todos yet']);
    assert.doesNotMatch(tipText(row.tooltip), /0\/0/);
  });

  it('puts a gate waiting for a person before progress; progress and quota go in the tooltip', () => {
    const { store, goalId } = workedGoal();
    const g = state(store, goalId);
    const row = goalRow(entry(g), g, nowOf(store));
    assert.deepEqual([row.label, row.description], ['A goal', '1 to approve']);
    const tip = tipText(row.tooltip);
    assert.match(tip, /^A goal · g$/m);
    assert.match(tip, /^Active · 1 of 3 todos done · 1 gate to approve · 19 turns left$/m);
    assert.ok(tip.includes(`Created ${whenText(g.createdAt, nowOf(store))}`), tip);
  });

  it('says how far it got once nothing waits, and a status other than active first', () => {
    const { store, goalId } = workedGoal();
    invoke(store, 'gate.approve', { goalId, gateId: 'staging' }, human, signed(store));
    let g = state(store, goalId);
    assert.equal(goalRow(entry(g), g, nowOf(store)).description, '1 of 3 done');
    invoke(store, 'goal.pause', { goalId }, human);
    g = state(store, goalId);
    assert.equal(goalRow(entry(g), g, nowOf(store)).description, 'paused');
  });

  it('says when its quota is used up', () => {
    const { store, goalId } = goalFixture({ quota: quota({ turns: 1 }) });
    invoke(store, 'todo.add', { goalId, todoId: 't', title: 'Do it' }, human);
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'codex' }, agent);
    const g = state(store, goalId);
    assert.equal(goalRow(entry(g), g, nowOf(store)).description, 'quota used up');
  });
});

describe('groups, todos and gates', () => {
  it('groups say what waits in them or how far they got', () => {
    const { store, goalId } = workedGoal();
    const g = state(store, goalId);
    const d = (group: Parameters<typeof groupRow>[0], count: number) => groupRow(group, count, g).description;
    assert.equal(d('todos', 3), '1 of 3 done');
    assert.equal(d('gates', 1), '1 to approve');
    assert.equal(d('runs', 1), '1');
    assert.equal(d('evidence', 0), 'none');
  });

  it('a todo: its title and where it stands; id, command, priority and gate in the tooltip', () => {
    const { store, goalId } = workedGoal();
    const g = state(store, goalId);
    const row = (id: string): RowText =>
      todoRow(
        g.todos.find((t) => t.id === id)!,
        g,
        nowOf(store),
      );
    assert.deepEqual(
      ['tests', 'docs', 'ship'].map((id) => [row(id).label, row(id).description]),
      [
        ['Run the tests', 'done'],
        ['Review the docs', 'for you'],
        ['Deploy to staging', 'gated'],
      ],
    );
    const tip = tipText(row('ship').tooltip);
    assert.match(tip, /^ship · Deploy to staging$/m, 'the id and the whole title first');
    assert.match(tip, /^\$ sh deploy\.sh$/m, 'the command whole');
    assert.match(tip, /^P2 · for an agent · open$/m);
    assert.match(tip, /^Needs gate staging \(pending\)$/m);
  });

  it('a gate under Gates: its name and state, not LoopX’s made-up title; what it guards in the tooltip', () => {
    const { store, goalId } = workedGoal();
    const g = state(store, goalId);
    const gate = g.gates[0]!;
    assert.equal(gate.title, 'Gate staging (guards: Deploy to staging)', 'the title LoopX gave it');
    const row = gateRow(gate, g, nowOf(store));
    assert.deepEqual([row.label, row.description], ['staging', 'pending']);
    const tip = tipText(row.tooltip);
    assert.match(tip, /^Guards: Deploy to staging$/m);
    assert.ok(
      tip.includes(
        `Requested by person alice at the command line at ${whenText(gate.requestedAt, nowOf(store))}`,
      ),
      tip,
    );
    assert.doesNotMatch(tip, /\d{4}-\d\d-\d\dT/, 'no raw ISO time');
    // A title someone gave is the name.
    assert.equal(gateName({ id: 'prod', title: 'Ship to production' }), 'Ship to production');
    assert.equal(gateName({ id: 'prod', title: 'Gate prod' }), 'prod');
  });
});

describe('records', () => {
  it('evidence is labelled by the command that ran, the outcome short; the output in the tooltip', () => {
    const { store, goalId } = workedGoal();
    const g = state(store, goalId);
    const row = evidenceRow(g.evidence[0]!, g, nowOf(store));
    assert.deepEqual([row.label, row.description], ['npm test', 'ok · 5 min ago']);
    const tip = tipText(row.tooltip);
    assert.match(tip, /^For todo tests: Run the tests$/m);
    assert.match(tip, /^Exit code 0 after 0\.07 s$/m);
    assert.match(tip, /^\$ exit 0 in 0\.07 s$/m, 'the recorded output, as data');
  });

  it('a test without a command is labelled by its todo, a note by its words; a failure says its exit code', () => {
    const { store, goalId } = workedGoal();
    invoke(
      store,
      'evidence.add',
      { goalId, todoId: 'ship', kind: 'test', summary: 'exit 2 in 3 s', exitCode: 2 },
      agent,
    );
    invoke(
      store,
      'evidence.add',
      { goalId, todoId: 'docs', kind: 'note', summary: 'Read it twice: fine.\nOne typo fixed.' },
      human,
    );
    const g = state(store, goalId);
    const [failed, note] = g.evidence.slice(-2).map((e) => evidenceRow(e, g, nowOf(store)));
    assert.deepEqual([failed!.label, failed!.description], ['Deploy to staging', 'exit 2 · 5 min ago']);
    // A note says what it says; its todo is in the tooltip.
    assert.deepEqual([note!.label, note!.description], ['Read it twice: fine.', 'note · 5 min ago']);
    assert.match(tipText(note!.tooltip), /^For todo docs: Review the docs$/m);
  });

  it('a run: who ran and how it went as the label, when, spend and reward after; the id only in the tooltip', () => {
    const { store, goalId } = workedGoal();
    const g = state(store, goalId);
    const r = g.runs[0]!;
    const row = runRow(r, '★ 0.8', undefined, nowOf(store));
    assert.deepEqual([row.label, row.description], ['codex', '5 min ago · $0.21 · ★ 0.8']);
    assert.doesNotMatch(`${row.label} ${row.description}`, /run-7f3a/);
    const tip = tipText(row.tooltip);
    assert.match(tip, /^Run run-7f3a · succeeded$/m);
    assert.ok(tip.includes(`codex started ${whenText(r.startedAt, nowOf(store))}`), tip);
    assert.match(tip, /^Spent 1 turn, \$0\.21$/m);
  });

  it('a run that did not succeed says how it went in its label', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'claude-code' }, agent);
    invoke(store, 'run.start', { goalId, runId: 'r2', agent: 'codex' }, agent);
    invoke(store, 'run.end', { goalId, runId: 'r2', outcome: 'failed', tokens: 18250 }, agent);
    const [open, failed] = state(store, goalId).runs.map((r) => runRow(r, '', undefined, nowOf(store)));
    assert.deepEqual([open!.label, open!.description], ['claude-code running', '5 min ago']);
    assert.deepEqual([failed!.label, failed!.description], ['codex failed', '5 min ago · 18,250 tokens']);
  });
});

describe('the policy rows', () => {
  it('a broken policy.json: the fix as the label, what is wrong as the description, the CLI’s words and the line in the tooltip', () => {
    const { store } = goalFixture();
    // A comma missing at the end of line 5: the parser stops on line 6.
    fs.writeFileSync(
      store.policyPath,
      '{\n  "v": 1,\n  "allowCommands": [\n    "git status *"\n  ]\n  "contractTtlMinutes": 30\n}\n',
    );
    let error: unknown;
    try {
      store.policyView();
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof LoopxError);
    const status = invalidPolicyStatus(store, error);
    const row = invalidPolicyRow(status);
    assert.equal(row.label, 'Fix policy.json');
    assert.equal(row.description, 'not valid JSON');
    const tip = tipText(row.tooltip);
    assert.ok(tip.includes(status.fix), 'the same fix `loopx status` gives');
    assert.ok(tip.includes(store.policyPath), 'the whole path');
    assert.match(tip, /no agent gets a contract/);
    assert.match(tip, /^Click to open it at line 6\.$/m);
  });

  it('unsigned changes: what to do as the label, the fields as the description', () => {
    const row = unsignedPolicyRow(['allowCommands'], 'policy.json has changes no person signed');
    assert.deepEqual([row.label, row.description], ['Policy changes to sign', 'allowCommands']);
  });
});

describe('times in rows', () => {
  it('a time older than a week reads as its date, never as ISO', () => {
    const { store, goalId } = workedGoal();
    const g = state(store, goalId);
    const later = nowOf(store) + 30 * 86_400_000;
    const row = evidenceRow(g.evidence[0]!, g, later);
    assert.equal(row.description, `ok · ${localDateTime(g.evidence[0]!.at, later).split(',')[0]}`);
  });
});
