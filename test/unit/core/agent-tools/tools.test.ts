/**
 * The agent tools (`callAgentTool`), the one implementation behind VS Code's language-model tools
 * and the MCP server: each tool's happy path and the events it writes (actor kind agent, channel
 * lm-tool or mcp); input refused with the field named (hosts do not validate); writes outside the
 * caller's contract refused naming the contract; an expired contract's refusal says to call
 * loopx_get_contract; an agent's own command waits for a person's review gate; and no tool makes
 * a person's decision.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ShouldRunOutput } from '../../../../src/core';
import type { AgentToolResult } from '../../../../src/core/agent-tools/tools';
import {
  AGENT_TOOL_NAMES,
  AGENT_TOOLS,
  callAgentTool,
  toolInputJsonSchema,
} from '../../../../src/core/agent-tools/tools';
import { invoke, listCapabilities, whyNotAllowed } from '../../../../src/core/capabilities/registry';
import { summaryAll } from '../../../../src/core/contract/summary';
import type { LoopxEvent } from '../../../../src/core/model/events';
import type { Actor } from '../../../../src/core/model/goal-state';
import type { Store } from '../../../../src/core/store/store';
import { GoalStatusDoc, StatusDoc } from '../../../../src/core/views/status-doc';
import { goalFixture, hashTree, throwsLoopx } from '../../../helpers/contract-kit';
import { HOSTILE_IDS, human, removeTempDirs, signed } from '../../../helpers/store';

after(removeTempDirs);

const MIN = 60_000;
const lm: Actor = { kind: 'agent', id: 'copilot', channel: 'lm-tool' };
const mcp: Actor = { kind: 'agent', id: 'claude', channel: 'mcp' };
const FRESH = /Next: call loopx_get_contract for a fresh contract\.$/;
const FIX_INPUT = /Next: fix the input and call the tool again\.$/;

const call = (store: Store, name: string, input: unknown, actor: Actor = lm): AgentToolResult =>
  callAgentTool(store, name, input, actor);

/** Runs `fn` and returns the events it appended to the goal's log. */
function written(store: Store, goalId: string, fn: () => unknown): LoopxEvent[] {
  const before = store.readLog(goalId).events.length;
  fn();
  return store.readLog(goalId).events.slice(before);
}

function assertActor(events: LoopxEvent[], actor: Actor) {
  assert.ok(events.length > 0, 'expected events');
  for (const e of events)
    assert.deepEqual(e.actor, actor, `event ${e.type} has actor ${JSON.stringify(e.actor)}`);
}

/**
 * A goal planned by a person: `build` (a command), `docs` (judgment) and `later` (judgment, gated
 * by `prod`), then a contract issued to the agent through the tool.
 */
function planned(opts: { actor?: Actor; docsBy?: Actor } = {}) {
  const actor = opts.actor ?? lm;
  const f = goalFixture();
  const { store, goalId } = f;
  invoke(
    store,
    'todo.add',
    { goalId, todoId: 'build', title: 'build it', action: 'npm run build', priority: 'P0' },
    human,
  );
  invoke(
    store,
    'todo.add',
    { goalId, todoId: 'docs', title: 'write the docs', priority: 'P1' },
    opts.docsBy ?? human,
  );
  invoke(
    store,
    'todo.add',
    { goalId, todoId: 'later', title: 'deploy', gate: 'prod', priority: 'P2' },
    human,
  );
  const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}, actor).data);
  assert.equal(out.decision, 'run');
  const contractId = out.interaction_contract.id!;
  return { ...f, actor, out, contractId, runId: out.run_id! };
}

describe('the tool set', () => {
  it('is the eight loopx_<verb>_<noun> tools, each with an object input schema and a precise description', () => {
    assert.deepEqual([...AGENT_TOOL_NAMES].sort(), [
      'loopx_add_todo',
      'loopx_claim_todo',
      'loopx_complete_todo',
      'loopx_get_contract',
      'loopx_get_status',
      'loopx_record_evidence',
      'loopx_report_spend',
      'loopx_request_gate',
    ]);
    for (const t of AGENT_TOOLS) {
      assert.match(t.name, /^loopx_[a-z]+_[a-z]+$/);
      const schema = toolInputJsonSchema(t);
      assert.equal(schema.type, 'object', t.name);
      assert.equal(schema.$schema, undefined, `${t.name}: the $schema key is dropped`);
      assert.ok(t.description.length > 60, `${t.name} needs a description a model can act on`);
      assert.equal(
        t.writes,
        !['loopx_get_contract', 'loopx_get_status'].includes(t.name),
        `${t.name} writes`,
      );
      assert.equal(
        typeof t.confirmation === 'function',
        t.writes,
        `${t.name}: writing tools (only) describe their effect`,
      );
    }
  });

  it('publishes the required fields in the JSON schema', () => {
    const required = (name: string) =>
      (toolInputJsonSchema(AGENT_TOOLS.find((t) => t.name === name)!).required as string[] | undefined) ?? [];
    assert.deepEqual(required('loopx_get_contract'), []);
    assert.deepEqual(required('loopx_add_todo'), ['title']);
    assert.deepEqual(required('loopx_claim_todo').sort(), ['contractId', 'todoId']);
    assert.deepEqual(required('loopx_complete_todo').sort(), ['contractId', 'summary', 'todoId']);
    assert.deepEqual(required('loopx_request_gate').sort(), ['gateId', 'reason']);
  });

  it('confirmation messages name goal, todo and effect, and change nothing', () => {
    const { store, contractId } = planned();
    const before = hashTree(store.root);
    const conf = (name: string, input: Record<string, unknown>) =>
      AGENT_TOOLS.find((t) => t.name === name)!.confirmation!(input as never);
    assert.equal(
      conf('loopx_add_todo', { goalId: 'g', title: 'lint', action: 'npm run lint', gate: 'ci' }),
      'Add a todo to goal g.\nTitle: lint\nCommand (waits for a person’s review): npm run lint\nGate: ci',
    );
    assert.equal(conf('loopx_add_todo', { title: 'read' }), 'Add a todo to the active goal.\nTitle: read');
    assert.match(conf('loopx_claim_todo', { contractId, todoId: 'docs' }), new RegExp(`docs.*${contractId}`));
    assert.equal(
      conf('loopx_complete_todo', { contractId, todoId: 'docs', summary: 'wrote it' }),
      `Mark todo docs done under contract ${contractId}.\nSummary: wrote it`,
    );
    assert.equal(
      conf('loopx_record_evidence', { contractId, kind: 'test', summary: 'ok', exitCode: 0 }),
      `Record test evidence under contract ${contractId}.\nSummary: ok\nExit code: 0`,
    );
    assert.match(conf('loopx_report_spend', { contractId, tokens: 10, costUsd: 0.2 }), /10 tokens.*\$0\.2/);
    assert.equal(
      conf('loopx_request_gate', { gateId: 'prod', reason: 'deploys', guards: ['ship'] }),
      'Ask the person to approve gate prod of the active goal.\nReason: deploys\nTodos that wait for it: ship',
    );
    assert.deepEqual(hashTree(store.root), before);
  });

  it('confirmation messages show the agent’s text whole and as it is, however long or markup-like', () => {
    const conf = (name: string, input: Record<string, unknown>) =>
      AGENT_TOOLS.find((t) => t.name === name)!.confirmation!(input as never);
    const title = `Tidy [docs](https://evil.example/lm) ![px](https://evil.example/px.png) <img src=x> ${'t'.repeat(100)}`;
    const action = `echo \`x\` *done* [y](z) ${'--flag '.repeat(250)}end`;
    const long = `${'word '.repeat(370)}\n  indented line\n**last**`;
    const lines = (s: string) => s.split('\n');
    const add = lines(conf('loopx_add_todo', { title, action }));
    assert.ok(add.includes(`Title: ${title}`), add.join('\n'));
    assert.ok(add.includes(`Command (waits for a person’s review): ${action}`), 'the whole command');
    for (const [name, input] of [
      ['loopx_complete_todo', { contractId: 'c', todoId: 't', summary: long }],
      ['loopx_record_evidence', { contractId: 'c', summary: long }],
      ['loopx_request_gate', { gateId: 'prod', reason: long }],
    ] as const) {
      const text = conf(name, input);
      assert.ok(text.includes(long), `${name}: the whole text, not cut`);
      assert.ok(text.length > long.length, name);
    }
  });

  it('has no tool that approves or rejects a gate, records a reward or grants quota', () => {
    // What each human-only capability would be called as a tool.
    const LOOKS_LIKE: Record<string, RegExp> = {
      'gate.approve': /approve/,
      'gate.reject': /reject/,
      'reward.add': /reward/,
      'quota.grant': /grant|quota/,
    };
    const humanOnly = listCapabilities()
      .filter((c) => c.humanOnly)
      .map((c) => c.id)
      .sort();
    assert.deepEqual(
      humanOnly,
      Object.keys(LOOKS_LIKE).sort(),
      'a new human-only capability needs a check here',
    );
    for (const id of humanOnly) {
      for (const t of AGENT_TOOLS) assert.doesNotMatch(t.name, LOOKS_LIKE[id]!, `${t.name} looks like ${id}`);
      // And the capability itself refuses both tool channels.
      assert.match(whyNotAllowed(id, lm) ?? '', /is human-only/);
      assert.match(whyNotAllowed(id, mcp) ?? '', /is human-only/);
    }
    const { store } = planned();
    for (const name of [
      'gate.approve',
      'loopx_approve_gate',
      'loopx_add_reward',
      'loopx_grant_quota',
      'reward.add',
    ]) {
      throwsLoopx(
        () => call(store, name, { goalId: 'g', gateId: 'prod' }),
        'usage',
        new RegExp(`no LoopX tool "${name.replace('.', '\\.')}"`),
        /loopx_get_contract, loopx_get_status/,
      );
    }
  });

  it('no call of any tool, however it is asked, writes a person’s decision', () => {
    const { store, goalId, contractId } = planned({ actor: mcp });
    const attempts: [string, Record<string, unknown>][] = [
      ['loopx_request_gate', { gateId: 'prod', reason: 'approve it', status: 'approved' }],
      ['loopx_request_gate', { gateId: 'prod', reason: 'approve it', approved: true, decidedBy: 'alice' }],
      ['loopx_record_evidence', { contractId, summary: 'score 1', kind: 'note', score: 1, reward: 1 }],
      ['loopx_report_spend', { contractId, tokens: 0, grant: { turns: 1000 } }],
      ['loopx_add_todo', { title: 'approve prod', gate: 'prod', owner: 'agent' }],
    ];
    for (const [name, input] of attempts) {
      try {
        call(store, name, input, mcp);
      } catch {
        /* refusing is fine too */
      }
    }
    const types = store.readLog(goalId).events.map((e) => e.type);
    for (const t of ['gate.approved', 'gate.rejected', 'reward.added', 'quota.granted'])
      assert.ok(!types.includes(t as never), `a tool wrote ${t}`);
    assert.equal(store.load(goalId).state.gates.find((g) => g.id === 'prod')?.status, 'pending');
  });
});

describe('loopx_get_contract', () => {
  it('waits for a plan when there are no todos, and writes nothing', () => {
    const { store, goalId } = goalFixture();
    const events = written(store, goalId, () => {
      const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}).data);
      assert.equal(out.decision, 'wait');
      assert.equal(out.interaction_contract.id, null);
    });
    assert.deepEqual(events, []);
  });

  it('opens a run with a signed contract for the calling agent, and gives the same contract again', () => {
    const { store, goalId, out, contractId } = planned();
    const run = store.load(goalId).state.runs.find((r) => r.contract?.id === contractId)!;
    assert.equal(run.agent, 'copilot', 'the agent defaults to the tool host’s name');
    const started = store.readLog(goalId).events.filter((e) => e.type === 'run.started');
    assert.equal(started.length, 1);
    assertActor(started, lm);
    assert.deepEqual(out.interaction_contract.cli_channel.next_cli_actions, [
      `loopx exec --contract ${contractId} --todo build -- 'npm run build'`,
    ]);
    assert.equal(out.interaction_contract.agent_channel.primary?.todo_id, 'build');
    // The text is the same document, for a model to read.
    const again = call(store, 'loopx_get_contract', { goalId });
    assert.deepEqual(JSON.parse(again.text), again.data);
    assert.equal(ShouldRunOutput.parse(again.data).interaction_contract.id, contractId);
    assert.equal(store.load(goalId).state.runs.length, 1, 'no second run while the first has work');
  });

  it('the agent is the caller, over MCP too: `agent` naming another is refused, its own is accepted', () => {
    const { store, goalId, contractId } = planned();
    const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}, mcp).data);
    const run = store.load(goalId).state.runs.find((r) => r.id === out.run_id)!;
    assert.equal(run.agent, 'claude');
    assertActor(
      store.readLog(goalId).events.filter((e) => e.type === 'run.started' && e.data.run.id === run.id),
      mcp,
    );
    // An older caller that still sends `agent`: its own name is fine, another's is refused.
    const same = ShouldRunOutput.parse(call(store, 'loopx_get_contract', { agent: 'claude' }, mcp).data);
    assert.equal(same.interaction_contract.id, out.interaction_contract.id);
    const before = store.readLog(goalId).events.length;
    const e = throwsLoopx(
      () => call(store, 'loopx_get_contract', { agent: 'copilot' }, mcp),
      'refused',
      /`agent` "copilot" is not you: your identity is "claude".*Next: call the tool again without `agent`/,
    );
    assert.equal(e.reason, 'agent_mismatch');
    assert.equal(store.readLog(goalId).events.length, before, 'nothing written');
    assert.notEqual(out.interaction_contract.id, contractId, "claude did not get copilot's contract");
    assert.ok(!('agent' in (toolInputJsonSchema(AGENT_TOOLS[0]!).properties as object)), 'no agent input');
  });

  it('after expiry, ends the stale run and issues a fresh contract', () => {
    const { store, goalId, clock, contractId, runId } = planned();
    clock.advance(31 * MIN);
    const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}).data);
    assert.equal(out.decision, 'run');
    assert.notEqual(out.interaction_contract.id, contractId);
    assert.equal(store.load(goalId).state.runs.find((r) => r.id === runId)?.outcome, 'abandoned');
  });
});

describe('loopx_get_status', () => {
  it('reads one goal or all goals, and writes nothing', () => {
    const { store, goalId } = planned();
    const before = hashTree(store.root);
    const one = GoalStatusDoc.parse(call(store, 'loopx_get_status', { goalId }).data);
    assert.equal(one.id, goalId);
    assert.equal(one.progress.total, 3);
    const all = StatusDoc.parse(call(store, 'loopx_get_status', {}).data);
    assert.deepEqual(
      all.goals.map((g) => g.id),
      [goalId],
    );
    assert.deepEqual(
      JSON.parse(call(store, 'loopx_get_status', {}).text).goals,
      JSON.parse(JSON.stringify(all.goals)),
    );
    assert.deepEqual(hashTree(store.root), before);
  });

  it('says clearly that a goal does not exist', () => {
    const { store } = goalFixture();
    throwsLoopx(() => call(store, 'loopx_get_status', { goalId: 'nope' }), 'not_found', /nope/);
  });
});

describe('loopx_add_todo', () => {
  it('adds a judgment todo (no review needed) with the agent as actor', () => {
    const { store, goalId } = goalFixture();
    let res!: AgentToolResult;
    const events = written(
      store,
      goalId,
      () => (res = call(store, 'loopx_add_todo', { title: 'write the plan', priority: 'P1' })),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['todo.added'],
    );
    assertActor(events, lm);
    const { todoId } = res.data as { todoId: string; waitingFor: string[] };
    assert.match(res.text, new RegExp(`^added todo ${todoId} to goal ${goalId}$`));
    const todo = store.load(goalId).state.todos.find((t) => t.id === todoId)!;
    assert.deepEqual(
      { title: todo.title, priority: todo.priority, owner: todo.owner, action: todo.action },
      { title: 'write the plan', priority: 'P1', owner: 'agent', action: undefined },
    );
    // A judgment todo is listed by the next contract at once.
    const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}).data);
    assert.equal(out.interaction_contract.agent_channel.primary?.todo_id, todoId);
  });

  for (const actor of [lm, mcp]) {
    it(`a command proposed via ${actor.channel} is not listed by should-run until a person approves review-<todoId>`, () => {
      const { store, goalId } = goalFixture();
      let res!: AgentToolResult;
      const events = written(
        store,
        goalId,
        () => (res = call(store, 'loopx_add_todo', { title: 'lint', action: 'npm run lint' }, actor)),
      );
      const { todoId, waitingFor } = res.data as { todoId: string; waitingFor: string[] };
      const review = `review-${todoId}`;
      assert.deepEqual(waitingFor, [review]);
      assert.match(res.text, new RegExp(`waits for gate ${review} \\(a person decides\\)`));
      assert.deepEqual(
        events.map((e) => e.type),
        ['todo.added', 'gate.requested'],
      );
      assertActor(events, actor);
      const gate = store.load(goalId).state.gates.find((g) => g.id === review)!;
      assert.equal(gate.status, 'pending');
      assert.deepEqual(gate.guards, [todoId]);
      assert.match(gate.reason, /proposed a command for todo/);

      const waiting = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}, actor).data);
      assert.equal(waiting.decision, 'wait');
      assert.deepEqual(waiting.interaction_contract.cli_channel.next_cli_actions, []);
      assert.deepEqual(
        waiting.interaction_contract.user_channel.gates.map((g) => g.id),
        [review],
      );
      assert.equal(store.load(goalId).state.runs.length, 0);

      invoke(store, 'gate.approve', { goalId, gateId: review }, human, signed(store));
      const run = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}, actor).data);
      assert.equal(run.decision, 'run');
      assert.deepEqual(run.interaction_contract.cli_channel.next_cli_actions, [
        `loopx exec --contract ${run.interaction_contract.id} --todo ${todoId} -- 'npm run lint'`,
      ]);
    });
  }

  it("with policy reviewAgentActions 'none', the agent's command is listed at once", () => {
    const { store, goalId } = goalFixture({ policy: { reviewAgentActions: 'none' } });
    const res = call(store, 'loopx_add_todo', { title: 'lint', action: 'npm run lint' });
    const { todoId, waitingFor } = res.data as { todoId: string; waitingFor: string[] };
    assert.deepEqual(waitingFor, []);
    assert.deepEqual(store.load(goalId).state.gates, []);
    const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}).data);
    assert.deepEqual(out.interaction_contract.cli_channel.next_cli_actions, [
      `loopx exec --contract ${out.interaction_contract.id} --todo ${todoId} -- 'npm run lint'`,
    ]);
  });

  it('a person adding the same command needs no review', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 'lint', title: 'lint', action: 'npm run lint' }, human);
    const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}).data);
    assert.equal(out.interaction_contract.cli_channel.next_cli_actions.length, 1);
  });

  it('asks for the gate a todo names', () => {
    const { store, goalId } = goalFixture();
    const res = call(store, 'loopx_add_todo', {
      title: 'migrate the data',
      gate: 'data-change',
      priority: 'P0',
      owner: 'agent',
    });
    const { todoId, waitingFor } = res.data as { todoId: string; waitingFor: string[] };
    assert.deepEqual(waitingFor, ['data-change']);
    const gate = store.load(goalId).state.gates.find((g) => g.id === 'data-change')!;
    assert.equal(gate.status, 'pending');
    assert.deepEqual(gate.guards, [todoId]);
  });

  it('goalId is optional with exactly one active goal, and needed with two', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'goal.create', { goalId: 'other', title: 'Other' }, human);
    invoke(store, 'goal.pause', { goalId: 'other' }, human);
    // A paused goal is not active: `g` is still the only one.
    const res = call(store, 'loopx_add_todo', { title: 'one' });
    assert.equal((res.data as { goalId: string }).goalId, goalId);

    invoke(store, 'goal.resume', { goalId: 'other' }, human);
    const before = hashTree(store.root);
    for (const name of ['loopx_add_todo', 'loopx_get_contract', 'loopx_request_gate']) {
      const e = throwsLoopx(
        () => call(store, name, { title: 'two', gateId: 'x', reason: 'why' }),
        'usage',
        /goalId is needed: 2 goals are active \(g, other\)/,
      );
      assert.match(e.message, FIX_INPUT);
    }
    assert.deepEqual(hashTree(store.root), before, 'nothing written');
    const named = call(store, 'loopx_add_todo', { goalId: 'other', title: 'two' });
    assert.equal((named.data as { goalId: string }).goalId, 'other');
  });

  it('with no active goal, says a person must create one', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'goal.close', { goalId }, human);
    throwsLoopx(
      () => call(store, 'loopx_add_todo', { title: 'x' }),
      'not_found',
      /no active goal/,
      /Create Goal/,
    );
  });

  it('refuses a command the workspace policy denies', () => {
    const { store } = goalFixture({ policy: { deniedActions: [{ pattern: 'rm -rf *', reason: 'never' }] } });
    throwsLoopx(
      () => call(store, 'loopx_add_todo', { title: 'clean', action: 'rm -rf /' }),
      'refused',
      /policy denies/,
    );
  });
});

describe('loopx_claim_todo', () => {
  it('claims a todo of the contract for the contract’s agent', () => {
    const { store, goalId, contractId } = planned();
    let res!: AgentToolResult;
    const events = written(
      store,
      goalId,
      () => (res = call(store, 'loopx_claim_todo', { contractId, todoId: 'docs' })),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['todo.claimed'],
    );
    assertActor(events, lm);
    assert.deepEqual(res.data, { goalId, todoId: 'docs' });
    const todo = store.load(goalId).state.todos.find((t) => t.id === 'docs')!;
    assert.equal(todo.status, 'claimed');
    assert.equal(todo.claimedBy, 'copilot');
  });

  it('refuses a todo the contract does not list, naming the contract', () => {
    const { store, goalId, contractId } = planned();
    const before = hashTree(store.root);
    // `later` waits for its gate; `ghost` does not exist.
    for (const todoId of ['later', 'ghost']) {
      throwsLoopx(
        () => call(store, 'loopx_claim_todo', { contractId, todoId }),
        'refused',
        new RegExp(`todo ${todoId} is not in contract ${contractId} \\(it lists build, docs\\)`),
      );
    }
    assert.deepEqual(hashTree(store.root), before);
    assert.equal(store.load(goalId).state.todos.find((t) => t.id === 'later')?.status, 'open');
  });

  it('refuses a contract that does not exist, with the next step', () => {
    const { store } = planned();
    const e = throwsLoopx(
      () => call(store, 'loopx_claim_todo', { contractId: 'c-0000000000', todoId: 'docs' }),
      'not_found',
      /no contract "c-0000000000"/,
    );
    assert.match(e.message, FRESH);
  });
});

describe('loopx_complete_todo', () => {
  it('completes a judgment todo of the contract and keeps the summary as evidence of the run', () => {
    const { store, goalId, contractId, runId } = planned({ actor: mcp });
    let res!: AgentToolResult;
    const events = written(
      store,
      goalId,
      () =>
        (res = call(
          store,
          'loopx_complete_todo',
          { contractId, todoId: 'docs', summary: 'wrote docs/agents.md; checked the links' },
          mcp,
        )),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['evidence.added', 'todo.completed'],
    );
    assertActor(events, mcp);
    assert.deepEqual(res.data, { goalId, todoId: 'docs', runId });
    const state = store.load(goalId).state;
    const ev = state.evidence.find((e) => e.todoId === 'docs')!;
    assert.deepEqual(
      { kind: ev.kind, runId: ev.runId, summary: ev.summary },
      { kind: 'note', runId, summary: 'wrote docs/agents.md; checked the links' },
    );
    assert.equal(state.todos.find((t) => t.id === 'docs')?.status, 'done');
    assert.ok(state.todos.find((t) => t.id === 'docs')!.evidence.includes(ev.id));
  });

  it('refuses a todo with a command: that is loopx exec’s job', () => {
    const { store, goalId, contractId } = planned();
    const e = throwsLoopx(
      () =>
        call(store, 'loopx_complete_todo', { contractId, todoId: 'build', summary: 'built it, trust me' }),
      'refused',
      /todo build has a command/,
      new RegExp(`next_cli_actions entry of contract ${contractId} \\(loopx exec\\)`),
    );
    assert.doesNotMatch(e.message, /Next: call/);
    assert.equal(store.load(goalId).state.todos.find((t) => t.id === 'build')?.status, 'open');
  });

  it('refuses a todo the contract does not list, naming the contract', () => {
    const { store, goalId, contractId } = planned();
    const before = hashTree(store.root);
    throwsLoopx(
      () => call(store, 'loopx_complete_todo', { contractId, todoId: 'later', summary: 'deployed' }),
      'refused',
      new RegExp(`todo later is not a judgment todo of contract ${contractId} \\(it lists docs\\)`),
    );
    assert.deepEqual(hashTree(store.root), before);
    assert.equal(store.load(goalId).state.todos.find((t) => t.id === 'later')?.status, 'open');
  });

  it('refuses an empty summary, naming the field', () => {
    const { store, contractId } = planned();
    const e = throwsLoopx(
      () => call(store, 'loopx_complete_todo', { contractId, todoId: 'docs', summary: '   ' }),
      'usage',
      /loopx_complete_todo: field summary: must say what was done/,
    );
    assert.match(e.message, FIX_INPUT);
  });
});

describe('loopx_record_evidence', () => {
  it('records evidence for the contract’s run, tied to a todo of the contract', () => {
    const { store, goalId, contractId, runId } = planned();
    let res!: AgentToolResult;
    const events = written(
      store,
      goalId,
      () =>
        (res = call(store, 'loopx_record_evidence', {
          contractId,
          todoId: 'docs',
          kind: 'test',
          summary: 'npm test: 42 passing',
          exitCode: 0,
        })),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['evidence.added'],
    );
    assertActor(events, lm);
    const { evidenceId } = res.data as { evidenceId: string };
    assert.match(res.text, new RegExp(`recorded evidence ${evidenceId} for run ${runId}`));
    const ev = store.load(goalId).state.evidence.find((e) => e.id === evidenceId)!;
    assert.deepEqual(
      { runId: ev.runId, todoId: ev.todoId, kind: ev.kind, summary: ev.summary, exitCode: ev.exitCode },
      { runId, todoId: 'docs', kind: 'test', summary: 'npm test: 42 passing', exitCode: 0 },
    );
  });

  it('defaults to a note about the run', () => {
    const { store, goalId, contractId, runId } = planned();
    const { evidenceId } = call(store, 'loopx_record_evidence', { contractId, summary: 'read the code' })
      .data as { evidenceId: string };
    const ev = store.load(goalId).state.evidence.find((e) => e.id === evidenceId)!;
    assert.deepEqual(
      { kind: ev.kind, runId: ev.runId, todoId: ev.todoId },
      { kind: 'note', runId, todoId: undefined },
    );
  });

  it('refuses a todo the contract does not list, naming the contract', () => {
    const { store, contractId } = planned();
    const before = hashTree(store.root);
    throwsLoopx(
      () => call(store, 'loopx_record_evidence', { contractId, todoId: 'later', summary: 'deployed' }),
      'refused',
      new RegExp(`todo later is not in contract ${contractId}`),
    );
    assert.deepEqual(hashTree(store.root), before);
  });
});

describe('loopx_report_spend', () => {
  it('adds tokens and cost to the contract’s run', () => {
    const { store, goalId, contractId, runId } = planned();
    const events = written(store, goalId, () =>
      call(store, 'loopx_report_spend', { contractId, tokens: 1200, costUsd: 0.25 }),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['run.spend'],
    );
    assertActor(events, lm);
    const res = call(store, 'loopx_report_spend', { contractId, tokens: 800 });
    assert.equal(res.text, `run ${runId} has now spent 2000 tokens, $0.25`);
    const spend = store.load(goalId).state.runs.find((r) => r.id === runId)!.spend;
    assert.equal(spend.tokens, 2000);
    assert.equal(spend.costUsd, 0.25);
  });

  it('refuses negative, fractional or textual amounts, naming the field', () => {
    const { store, contractId } = planned();
    throwsLoopx(() => call(store, 'loopx_report_spend', { contractId, tokens: -5 }), 'usage', /field tokens/);
    throwsLoopx(
      () => call(store, 'loopx_report_spend', { contractId, tokens: 1.5 }),
      'usage',
      /field tokens/,
    );
    throwsLoopx(
      () => call(store, 'loopx_report_spend', { contractId, tokens: '100' }),
      'usage',
      /field tokens/,
    );
    throwsLoopx(
      () => call(store, 'loopx_report_spend', { contractId, costUsd: -1 }),
      'usage',
      /field costUsd/,
    );
  });
});

describe('loopx_request_gate', () => {
  it('asks the person; the todos it guards wait, other work goes on', () => {
    const { store, goalId, contractId } = planned({ actor: mcp, docsBy: mcp });
    let res!: AgentToolResult;
    const events = written(
      store,
      goalId,
      () =>
        (res = call(
          store,
          'loopx_request_gate',
          { gateId: 'docs-review', reason: 'the docs name a customer', guards: ['docs'] },
          mcp,
        )),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['gate.requested'],
    );
    assertActor(events, mcp);
    assert.match(res.text, /gate docs-review of goal g is pending: the person has been asked/);
    const gate = store.load(goalId).state.gates.find((g) => g.id === 'docs-review')!;
    assert.deepEqual(
      { status: gate.status, guards: gate.guards, reason: gate.reason },
      { status: 'pending', guards: ['docs'], reason: 'the docs name a customer' },
    );
    // The guarded todo can no longer be completed under the contract; the command still can.
    throwsLoopx(
      () => call(store, 'loopx_complete_todo', { contractId, todoId: 'docs', summary: 'done' }, mcp),
      'refused',
      /needs gate docs-review approved/,
    );
    const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}, mcp).data);
    assert.equal(out.decision, 'run');
    assert.ok(out.interaction_contract.user_channel.gates.some((g) => g.id === 'docs-review'));
  });

  it('refuses an empty reason and unknown guarded todos', () => {
    const { store, goalId } = planned();
    throwsLoopx(
      () => call(store, 'loopx_request_gate', { gateId: 'x', reason: '' }),
      'usage',
      /field reason: must say why a person is needed/,
    );
    throwsLoopx(
      () => call(store, 'loopx_request_gate', { gateId: 'x', reason: 'why', guards: ['ghost'] }),
      'not_found',
      /no todo "ghost"/,
    );
    assert.equal(
      store.load(goalId).state.gates.some((g) => g.id === 'x'),
      false,
    );
  });
});

describe('input is validated (hosts do not)', () => {
  const REQUIRED: Record<string, string> = {
    loopx_add_todo: 'title',
    loopx_claim_todo: 'contractId',
    loopx_complete_todo: 'contractId',
    loopx_record_evidence: 'contractId',
    loopx_report_spend: 'contractId',
    loopx_request_gate: 'gateId',
  };

  it('{wrong: 1} and a missing field are refused naming the field, and nothing is written', () => {
    const { store } = planned();
    const before = hashTree(store.root);
    for (const [name, field] of Object.entries(REQUIRED)) {
      for (const input of [{ wrong: 1 }, {}, undefined, null]) {
        const e = throwsLoopx(
          () => call(store, name, input),
          'usage',
          new RegExp(`^${name}: field ${field}: `),
        );
        assert.match(e.message, FIX_INPUT);
      }
    }
    assert.deepEqual(hashTree(store.root), before);
  });

  it('input that is not an object is refused', () => {
    const { store } = planned();
    for (const name of AGENT_TOOL_NAMES) {
      for (const input of ['goalId=g', 42, true, ['g']]) {
        throwsLoopx(() => call(store, name, input), 'usage', new RegExp(`^${name}: `), /expected object/);
      }
    }
  });

  it('hostile ids are refused in every id field, naming the field, before anything is touched', () => {
    const { store, contractId } = planned();
    const before = hashTree(store.root);
    const cases: [string, string, Record<string, unknown>][] = [
      ['loopx_get_contract', 'goalId', {}],
      ['loopx_get_status', 'goalId', {}],
      ['loopx_add_todo', 'goalId', { title: 't' }],
      ['loopx_add_todo', 'gate', { title: 't' }],
      ['loopx_claim_todo', 'contractId', { todoId: 'docs' }],
      ['loopx_claim_todo', 'todoId', { contractId }],
      ['loopx_complete_todo', 'todoId', { contractId, summary: 's' }],
      ['loopx_record_evidence', 'todoId', { contractId, summary: 's' }],
      ['loopx_report_spend', 'contractId', { tokens: 1 }],
      ['loopx_request_gate', 'gateId', { reason: 'r' }],
      ['loopx_request_gate', 'goalId', { gateId: 'x', reason: 'r' }],
    ];
    for (const [name, field, rest] of cases) {
      for (const [id, why] of HOSTILE_IDS) {
        const e = throwsLoopx(() => call(store, name, { ...rest, [field]: id }), 'usage');
        assert.match(e.message, new RegExp(`field ${field}: `), `${name} ${field} = ${why}: ${e.message}`);
      }
    }
    // Lists of ids too.
    throwsLoopx(
      () => call(store, 'loopx_add_todo', { title: 't', dependsOn: ['docs', '../x'] }),
      'usage',
      /field dependsOn\.1: /,
    );
    throwsLoopx(
      () => call(store, 'loopx_request_gate', { gateId: 'x', reason: 'r', guards: ['$(id)'] }),
      'usage',
      /field guards\.0: /,
    );
    assert.deepEqual(hashTree(store.root), before);
  });

  it('text with control characters and over-long text are refused, naming the field', () => {
    const { store, contractId } = planned();
    throwsLoopx(
      () => call(store, 'loopx_add_todo', { title: 'a\u001b[31mred' }),
      'usage',
      /field title: must not contain control characters/,
    );
    throwsLoopx(
      () => call(store, 'loopx_add_todo', { title: 'x'.repeat(201) }),
      'usage',
      /field title: must be at most 200 characters/,
    );
    throwsLoopx(
      () => call(store, 'loopx_add_todo', { title: 't', action: 'echo a\necho b' }),
      'usage',
      /field action: /,
    );
    throwsLoopx(
      () => call(store, 'loopx_add_todo', { title: 't', priority: 'P9' }),
      'usage',
      /field priority: /,
    );
    throwsLoopx(
      () => call(store, 'loopx_record_evidence', { contractId, summary: 's', kind: 'reward' }),
      'usage',
      /field kind: /,
    );
    throwsLoopx(
      () => call(store, 'loopx_record_evidence', { contractId, summary: 'x'.repeat(4001) }),
      'usage',
      /field summary: must be at most 4000/,
    );
  });
});

describe('writes outside the current contract', () => {
  const WRITES: [string, (c: string) => Record<string, unknown>][] = [
    ['loopx_claim_todo', (contractId) => ({ contractId, todoId: 'docs' })],
    ['loopx_complete_todo', (contractId) => ({ contractId, todoId: 'docs', summary: 'done' })],
    ['loopx_record_evidence', (contractId) => ({ contractId, summary: 'a note' })],
    ['loopx_report_spend', (contractId) => ({ contractId, tokens: 10 })],
  ];

  it('an expired contract: refused, and the refusal ends with "Next: call loopx_get_contract"', () => {
    const { store, goalId, clock, contractId } = planned();
    clock.advance(30 * MIN);
    const before = hashTree(store.root);
    for (const [name, input] of WRITES) {
      const e = throwsLoopx(
        () => call(store, name, input(contractId)),
        'refused',
        new RegExp(`contract ${contractId} expired at 2026-11-30T10:30:00\\.000Z`),
        FRESH,
      );
      assert.doesNotMatch(e.message, /should-run/, 'the CLI hint is replaced by the tool to call');
    }
    assert.deepEqual(hashTree(store.root), before);
    assert.equal(store.load(goalId).state.todos.find((t) => t.id === 'docs')?.status, 'open');
  });

  it('a contract whose run ended: refused, with the same next step', () => {
    const { store, goalId, contractId } = planned();
    summaryAll(store, goalId, lm);
    for (const [name, input] of WRITES) {
      throwsLoopx(
        () => call(store, name, input(contractId)),
        'refused',
        new RegExp(`contract ${contractId} belongs to run .* which ended`),
        FRESH,
      );
    }
  });

  it('a contract of another workspace or a made-up one: refused, with the same next step', () => {
    const { store } = planned();
    const other = planned();
    for (const [name, input] of WRITES) {
      throwsLoopx(
        () => call(store, name, input(other.contractId)),
        'not_found',
        /forged, mistyped or from another workspace/,
        FRESH,
      );
    }
  });

  it('a paused goal: its contract authorises no more work; the turn still records what it spent and found', () => {
    const { store, goalId, contractId } = planned();
    invoke(store, 'goal.pause', { goalId }, human);
    const RECORDS = ['loopx_record_evidence', 'loopx_report_spend'];
    for (const [name, input] of WRITES.filter(([n]) => !RECORDS.includes(n))) {
      throwsLoopx(
        () => call(store, name, input(contractId)),
        'refused',
        new RegExp(`goal ${goalId} is paused now: contract ${contractId} no longer authorises anything`),
      );
    }
    for (const [name, input] of WRITES.filter(([n]) => RECORDS.includes(n)))
      call(store, name, input(contractId));
    const state = store.load(goalId).state;
    assert.equal(state.runs[0]!.spend.tokens, 10, 'the spend of the paused turn counts');
    assert.ok(state.evidence.some((e) => e.summary === 'a note'));
  });

  it("two agents' contracts: a claim under one holds against the other", () => {
    const { store, goalId, contractId } = planned({ actor: lm });
    // A second agent gets its own contract; claims under it are that agent's.
    const out = ShouldRunOutput.parse(call(store, 'loopx_get_contract', {}, mcp).data);
    assert.equal(out.decision, 'run');
    assert.notEqual(out.interaction_contract.id, contractId);
    call(store, 'loopx_claim_todo', { contractId, todoId: 'docs' }, lm);
    throwsLoopx(
      () =>
        call(store, 'loopx_claim_todo', { contractId: out.interaction_contract.id!, todoId: 'docs' }, mcp),
      'refused',
      /todo docs is claimed by copilot/,
    );
    assert.equal(store.load(goalId).state.todos.find((t) => t.id === 'docs')?.claimedBy, 'copilot');
  });
});

describe('results a model can act on', () => {
  it('every result has short text and structured data', () => {
    const { store, contractId } = planned();
    const results = [
      call(store, 'loopx_get_status', { goalId: 'g' }),
      call(store, 'loopx_add_todo', { title: 'x' }),
      call(store, 'loopx_claim_todo', { contractId, todoId: 'docs' }),
      call(store, 'loopx_record_evidence', { contractId, summary: 'n' }),
      call(store, 'loopx_report_spend', { contractId, tokens: 1 }),
      call(store, 'loopx_complete_todo', { contractId, todoId: 'docs', summary: 'done' }),
      call(store, 'loopx_request_gate', { gateId: 'y', reason: 'why' }),
    ];
    for (const r of results) {
      assert.equal(typeof r.text, 'string');
      assert.ok(r.text.length > 0);
      assert.ok(
        typeof r.data === 'object' && r.data !== null && !Array.isArray(r.data),
        `data is an object: ${r.text}`,
      );
    }
    for (const r of results.slice(1))
      assert.ok(r.text.length < 300, `writing tools answer in a line: ${r.text}`);
  });
});

describe('identity from the channel (security finding 7)', () => {
  it("one agent cannot claim, complete, record evidence or report spend under another's contract", () => {
    // copilot (lm) holds the contract; claude (mcp) tries to use its id.
    const { store, goalId, contractId } = planned();
    const before = store.readLog(goalId).events.length;
    const attempts: [string, Record<string, unknown>][] = [
      ['loopx_claim_todo', { contractId, todoId: 'docs' }],
      ['loopx_complete_todo', { contractId, todoId: 'docs', summary: 'done by someone else' }],
      ['loopx_record_evidence', { contractId, summary: 'not mine' }],
      ['loopx_report_spend', { contractId, tokens: 1 }],
    ];
    for (const [name, input] of attempts) {
      const e = throwsLoopx(
        () => call(store, name, input, mcp),
        'refused',
        /contract c-\w+ was issued to agent "copilot", not to you \("claude"\)/,
        /Next: call loopx_get_contract for your own contract\.$/,
      );
      assert.equal(e.reason, 'contract_other_agent', name);
    }
    assert.equal(store.readLog(goalId).events.length, before, 'nothing written');
    // The same agent on another channel with the same name is the same agent.
    call(store, 'loopx_claim_todo', { contractId, todoId: 'docs' }, { ...lm, channel: 'mcp' });
  });

  it('`agent` in any tool input is dropped when it is the caller, refused otherwise', () => {
    const { store, contractId } = planned();
    call(store, 'loopx_record_evidence', { contractId, summary: 'mine', agent: 'copilot' });
    for (const agent of ['claude', '', 42, { id: 'copilot' }]) {
      const e = throwsLoopx(
        () => call(store, 'loopx_record_evidence', { contractId, summary: 'x', agent }),
        'refused',
        /is not you/,
      );
      assert.equal(e.reason, 'agent_mismatch');
    }
  });
});

describe('spend reports stay finite and bounded (security finding 8)', () => {
  it('refuses a report above the per-report ceiling, naming the field and the limit', () => {
    const { store, goalId, contractId, runId } = planned();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { costUsd: 1e308 },
        'costUsd',
        /costUsd 1e\+308 is too large: one spend report adds at most 100000 USD/,
      ],
      [{ costUsd: 100000.01 }, 'costUsd', /at most 100000 USD/],
      [{ tokens: 1e9 + 1 }, 'tokens', /tokens 1000000001 is too large: .*at most 1000000000 tokens/],
      [{ tokens: 1e300 }, 'tokens', /at most 1000000000 tokens/],
    ];
    for (const [spend, field, message] of cases) {
      const e = throwsLoopx(
        () => call(store, 'loopx_report_spend', { contractId, ...spend }),
        'refused',
        message,
      );
      assert.equal(e.reason, 'spend_too_large');
      assert.equal(e.details.field, field);
    }
    // At the ceiling is fine; the run's spend is what was reported.
    call(store, 'loopx_report_spend', { contractId, tokens: 1e9, costUsd: 1e5 });
    const run = store.load(goalId).state.runs.find((r) => r.id === runId)!;
    assert.deepEqual([run.spend.tokens, run.spend.costUsd], [1e9, 1e5]);
    // Infinity cannot come through JSON as a number, and a non-number is bad input.
    throwsLoopx(() => call(store, 'loopx_report_spend', { contractId, costUsd: Infinity }), 'usage');
  });
});
