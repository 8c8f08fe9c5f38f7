/**
 * The capability registry: every capability's happy path and its refusals, who may call what,
 * and the declarations `loopx capabilities` prints.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import {
  invoke,
  listCapabilities,
  capabilityIds,
  whyNotAllowed,
} from '../../../../src/core/capabilities/registry';
import { LoopxError } from '../../../../src/core/model/errors';
import { gateFacts } from '../../../../src/core/views/gate-facts';
import { effectiveStatus, HUMAN_CHANNELS } from '../../../../src/core/model/goal-state';
import type { Actor, Channel, GoalState } from '../../../../src/core/model/goal-state';
import type { Store } from '../../../../src/core/store/store';
import {
  human,
  agent,
  toolAgent,
  system,
  tempStore,
  removeTempDirs,
  signed,
  writeSignedPolicy,
} from '../../../helpers/store';

after(removeTempDirs);

const vscodeUser: Actor = { kind: 'user', id: 'bob', channel: 'vscode' };

/** A store with goal `g` (created by a person). */
function withGoal(): Store {
  const store = tempStore();
  invoke(store, 'goal.create', { goalId: 'g', title: 'Goal', objective: 'do it' }, human);
  return store;
}
const state = (store: Store, goalId = 'g'): GoalState => store.load(goalId).state;
const todoOf = (store: Store, id: string) => state(store).todos.find((t) => t.id === id);
const gateOf = (store: Store, id: string) => state(store).gates.find((g) => g.id === id);
const setPolicy = writeSignedPolicy;

/**
 * Calls a capability that must be refused: checks the error kind, the words of its message, and
 * that nothing was written to the goal's log.
 */
function refuses(
  store: Store,
  cap: string,
  input: Record<string, unknown>,
  actor: Actor,
  kind: LoopxError['kind'],
  ...patterns: RegExp[]
): LoopxError {
  const goalId = typeof input?.goalId === 'string' ? input.goalId : undefined;
  const log = goalId && store.exists(goalId) ? fs.readFileSync(store.logPath(goalId)) : undefined;
  let caught: unknown;
  try {
    invoke(store, cap, input, actor);
  } catch (e) {
    caught = e;
  }
  assert.ok(
    caught instanceof LoopxError,
    `${cap} should be refused (${kind}) but ${caught === undefined ? 'succeeded' : `threw ${String(caught)}`}`,
  );
  assert.equal(caught.kind, kind, `kind of: ${caught.message}`);
  for (const p of patterns) assert.match(caught.message, p);
  if (log) assert.ok(fs.readFileSync(store.logPath(goalId!)).equals(log), `a refused ${cap} wrote nothing`);
  return caught;
}

const REQUIRED = [
  'goal.create',
  'goal.pause',
  'goal.resume',
  'goal.close',
  'goal.cancel',
  'todo.add',
  'todo.claim',
  'todo.update',
  'todo.complete',
  'todo.cancel',
  'gate.request',
  'gate.approve',
  'gate.reject',
  'evidence.add',
  'run.start',
  'run.spend',
  'run.end',
  'reward.add',
  'quota.grant',
  'quota.set',
];
const HUMAN_ONLY = ['gate.approve', 'gate.reject', 'reward.add', 'quota.grant'];

describe('the registry', () => {
  it('declares every capability the issue lists, each with touches, gates, quota, actors and an input schema', () => {
    const decls = listCapabilities();
    const ids = decls.map((d) => d.id);
    for (const id of REQUIRED) assert.ok(ids.includes(id), `${id} is declared`);
    assert.equal(new Set(ids).size, ids.length, 'no capability twice');
    assert.deepEqual(capabilityIds(), ids);
    for (const d of decls) {
      assert.ok(d.summary.length > 10, `${d.id} summary`);
      assert.ok(d.touches.length > 0, `${d.id} touches`);
      assert.equal(typeof d.gates, 'string');
      assert.equal(typeof d.quota, 'string');
      assert.ok(
        d.actors.length > 0 && d.actors.every((a) => ['user', 'agent', 'system'].includes(a)),
        `${d.id} actors`,
      );
      const input = d.input as { type?: string; properties?: Record<string, unknown>; required?: string[] };
      assert.equal(input.type, 'object', `${d.id} input is an object schema`);
      assert.ok(input.properties && 'goalId' in input.properties, `${d.id} takes a goalId`);
      if (d.id !== 'goal.create') assert.ok(input.required?.includes('goalId'), `${d.id} requires goalId`);
    }
    assert.doesNotThrow(() => JSON.parse(JSON.stringify(decls)), 'the declarations print as JSON');
  });

  it('marks exactly gate approve/reject, reward add and quota grant human-only, callable by users only', () => {
    const decls = listCapabilities();
    assert.deepEqual(
      decls
        .filter((d) => d.humanOnly)
        .map((d) => d.id)
        .sort(),
      [...HUMAN_ONLY].sort(),
    );
    for (const d of decls.filter((x) => x.humanOnly)) assert.deepEqual(d.actors, ['user']);
  });

  it('declares what each capability touches, needs and consumes in words a person can read', () => {
    const byId = new Map(listCapabilities().map((d) => [d.id, d]));
    assert.deepEqual(byId.get('todo.add')!.touches, ['todos', 'gates']);
    assert.match(byId.get('todo.complete')!.gates, /gate must be approved/);
    assert.match(byId.get('run.start')!.quota, /one turn/);
    assert.deepEqual(byId.get('gate.reject')!.touches, ['gates', 'todos']);
    const todoAdd = byId.get('todo.add')!.input as {
      properties: Record<string, { enum?: string[]; default?: unknown }>;
      required: string[];
    };
    assert.deepEqual(todoAdd.properties.priority!.enum, ['P0', 'P1', 'P2', 'P3']);
    assert.equal(todoAdd.properties.priority!.default, 'P2');
    assert.deepEqual(todoAdd.required.sort(), ['goalId', 'title']);
    assert.match(byId.get('goal.pause')!.summary, /active -> paused/);
  });

  it('an unknown capability is a usage error naming it and where to look', () => {
    const store = withGoal();
    refuses(
      store,
      'goal.delete',
      { goalId: 'g' },
      human,
      'usage',
      /there is no capability "goal\.delete"/,
      /loopx capabilities/,
    );
    assert.match(whyNotAllowed('nope', human)!, /no capability "nope"/);
  });
});

describe('who may call', () => {
  const agentChannels: Channel[] = ['lm-tool', 'mcp', 'hook', 'cli', 'vscode'];
  const nonHumanChannels: Channel[] = ['lm-tool', 'mcp', 'hook', 'http', 'system'];

  it('human-only capabilities refuse agents on every channel, saying who may call and who called', () => {
    for (const cap of HUMAN_ONLY) {
      for (const channel of agentChannels) {
        const caller: Actor = { kind: 'agent', id: 'codex', channel };
        const why = whyNotAllowed(cap, caller);
        assert.ok(why, `${cap} via ${channel}`);
        assert.match(why, new RegExp(`^${cap.replace('.', '\\.')} is human-only`));
        assert.match(
          why,
          new RegExp(
            `a person does it at a terminal with \`loopx ${cap.replace('.', ' ')}\` .*\`loopx key create\` once.* or in VS Code`,
          ),
        );
        assert.match(why, new RegExp(`this call came from agent codex via ${channel}`));
      }
    }
  });

  it('human-only capabilities refuse a user on an agent channel (LM tool, MCP, hook, HTTP) and the system', () => {
    for (const cap of HUMAN_ONLY) {
      for (const channel of nonHumanChannels) {
        assert.match(
          whyNotAllowed(cap, { kind: 'user', id: 'alice', channel })!,
          new RegExp(`human-only.*came from user alice via ${channel}`),
        );
      }
      assert.match(whyNotAllowed(cap, system)!, /human-only.*came from system self-repair via system/);
      for (const channel of HUMAN_CHANNELS)
        assert.equal(whyNotAllowed(cap, { kind: 'user', id: 'alice', channel }), undefined);
    }
  });

  it('the refusal comes before anything else and writes nothing', () => {
    const store = withGoal();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'deploy' }, agent);
    const e = refuses(
      store,
      'gate.approve',
      { goalId: 'g', gateId: 'deploy' },
      agent,
      'refused',
      /gate\.approve is human-only/,
      /agent codex via cli/,
    );
    assert.equal(e.details.capability, 'gate.approve');
    refuses(
      store,
      'gate.approve',
      { goalId: 'g', gateId: 'deploy' },
      { kind: 'user', id: 'alice', channel: 'lm-tool' },
      'refused',
      /human-only/,
    );
    // Even invalid input is refused for who is calling, not for the input.
    refuses(store, 'gate.reject', { goalId: 'g' }, agent, 'refused', /human-only/);
    assert.equal(gateOf(store, 'deploy')?.status, 'pending');
  });

  it('a capability limited to some actors names them', () => {
    const store = withGoal();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'x' }, agent);
    refuses(
      store,
      'gate.expire',
      { goalId: 'g', gateId: 'x' },
      agent,
      'refused',
      /gate\.expire may be called by system or user, not by agent codex via cli/,
    );
    for (const cap of REQUIRED.filter((c) => !HUMAN_ONLY.includes(c)))
      assert.equal(whyNotAllowed(cap, agent), undefined, `${cap} is open to agents`);
  });
});

describe('goal lifecycle capabilities', () => {
  it('goal.create: explicit id, objective, handoff, the policy’s default quota, recorded actor', () => {
    const store = tempStore();
    setPolicy(store, {
      defaultQuota: {
        budgets: { turns: 7, costUsd: 2 },
        window: { kind: 'rolling', hours: 24 },
        cooldownSeconds: 30,
      },
    });
    const r = invoke(
      store,
      'goal.create',
      { goalId: 'ship', title: 'Ship it', objective: 'line one\nline two', handoff: ['call bob'] },
      vscodeUser,
    );
    assert.equal(r.goalId, 'ship');
    assert.equal(r.revision, 1);
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['goal.created'],
    );
    assert.deepEqual(r.events[0]!.actor, vscodeUser);
    const s = state(store, 'ship');
    assert.deepEqual(
      { title: s.title, objective: s.objective, handoff: s.handoff, status: s.status, quota: s.quota },
      {
        title: 'Ship it',
        objective: 'line one\nline two',
        handoff: ['call bob'],
        status: 'active',
        quota: {
          budgets: { turns: 7, costUsd: 2 },
          window: { kind: 'rolling', hours: 24 },
          cooldownSeconds: 30,
        },
      },
    );
    assert.equal(effectiveStatus(s), 'active', 'no todos yet: waiting for a plan');
  });

  it('goal.create: an id made from the title and returned to the caller; an explicit quota wins over the policy', () => {
    const store = tempStore();
    const quota = { budgets: { tokens: 1000 }, window: { kind: 'life' }, cooldownSeconds: 0 };
    const r = invoke<{ goalId: string }>(
      store,
      'goal.create',
      { title: 'Refactor the Payment module', quota },
      agent,
    );
    assert.match(r.goalId, /^refactor-the-payment-module-[0-9a-z]{4}$/);
    assert.equal(r.input.goalId, r.goalId);
    assert.deepEqual(state(store, r.goalId).quota, quota);
    assert.equal(state(store, r.goalId).objective, '');
  });

  it('goal.create refuses a duplicate id, a missing or multi-line title, and a bad quota, naming the field', () => {
    const store = withGoal();
    refuses(
      store,
      'goal.create',
      { goalId: 'g', title: 'again' },
      human,
      'conflict',
      /goal g already exists/,
    );
    refuses(store, 'goal.create', { goalId: 'h' }, human, 'usage', /^goal\.create: field title/);
    refuses(
      store,
      'goal.create',
      { goalId: 'h', title: 'two\nlines' },
      human,
      'usage',
      /field title: must not contain control characters or line breaks/,
    );
    refuses(
      store,
      'goal.create',
      { goalId: 'h', title: 'x'.repeat(201) },
      human,
      'usage',
      /field title: must be at most 200 characters/,
    );
    refuses(
      store,
      'goal.create',
      {
        goalId: 'h',
        title: 'q',
        quota: { budgets: { turns: -1 }, window: { kind: 'life' }, cooldownSeconds: 0 },
      },
      human,
      'usage',
      /field quota\.budgets\.turns/,
    );
    refuses(
      store,
      'goal.create',
      { goalId: 'h', title: 'q', handoff: ['ok', 'bell\u0007'] },
      human,
      'usage',
      /field handoff\.1/,
    );
    refuses(
      store,
      'goal.create',
      null as unknown as Record<string, unknown>,
      human,
      'usage',
      /^goal\.create: /,
    );
    assert.deepEqual(store.goalIds(), ['g']);
  });

  it('pause, resume, close and cancel record their reason; an unknown goal is not_found', () => {
    const store = withGoal();
    let r = invoke(store, 'goal.pause', { goalId: 'g', reason: 'waiting for the API key' }, human);
    assert.deepEqual(
      r.events.map((e) => [e.type, e.data]),
      [['goal.paused', { reason: 'waiting for the API key' }]],
    );
    assert.equal(r.state.status, 'paused');
    r = invoke(store, 'goal.resume', { goalId: 'g' }, agent);
    assert.equal(r.state.status, 'active');
    r = invoke(store, 'goal.close', { goalId: 'g', reason: 'shipped' }, human);
    assert.equal(r.state.status, 'closed');
    const other = withGoal();
    assert.equal(invoke(other, 'goal.cancel', { goalId: 'g' }, human).state.status, 'cancelled');
    refuses(store, 'goal.pause', { goalId: 'nope' }, human, 'not_found', /no goal "nope"/);
    refuses(
      other,
      'goal.pause',
      { goalId: 'g', reason: 'x\u001b[2J' },
      human,
      'usage',
      /field reason: must not contain control characters/,
    );
  });
});

describe('todo capabilities', () => {
  it('todo.add: defaults (agent, P2, open) and a generated id returned to the caller', () => {
    const store = withGoal();
    const r = invoke<{ todoId: string }>(store, 'todo.add', { goalId: 'g', title: 'write tests' }, agent);
    assert.match(r.input.todoId, /^t-[0-9a-z]{6}$/);
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['todo.added'],
    );
    const t = todoOf(store, r.input.todoId)!;
    assert.deepEqual(
      {
        owner: t.owner,
        priority: t.priority,
        status: t.status,
        dependsOn: t.dependsOn,
        evidence: t.evidence,
        gate: t.gate,
      },
      { owner: 'agent', priority: 'P2', status: 'open', dependsOn: [], evidence: [], gate: undefined },
    );
  });

  it('todo.add: an action, dependencies, a priority and a person as owner', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(
      store,
      'todo.add',
      {
        goalId: 'g',
        todoId: 'b',
        title: 'b',
        priority: 'P0',
        action: 'npm test',
        dependsOn: ['a'],
        owner: 'user',
      },
      human,
    );
    const b = todoOf(store, 'b')!;
    assert.deepEqual(
      { priority: b.priority, action: b.action, dependsOn: b.dependsOn, owner: b.owner },
      { priority: 'P0', action: 'npm test', dependsOn: ['a'], owner: 'user' },
    );
  });

  it('todo.add refuses a duplicate id, an unknown dependency and bad fields, naming them', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    refuses(
      store,
      'todo.add',
      { goalId: 'g', todoId: 'a', title: 'again' },
      agent,
      'refused',
      /goal g already has a todo a/,
    );
    refuses(
      store,
      'todo.add',
      { goalId: 'g', todoId: 'b', title: 'b', dependsOn: ['zz'] },
      agent,
      'not_found',
      /goal g has no todo "zz"/,
    );
    refuses(
      store,
      'todo.add',
      { goalId: 'g', title: 'b', priority: 'P9' },
      agent,
      'usage',
      /^todo\.add: field priority/,
    );
    refuses(store, 'todo.add', { goalId: 'g', title: 'b', owner: 'robot' }, agent, 'usage', /field owner/);
    refuses(store, 'todo.add', { goalId: 'g', title: '' }, agent, 'usage', /field title: must not be empty/);
    refuses(
      store,
      'todo.add',
      { goalId: 'g', title: 'b', action: 'make\nrm -rf /' },
      agent,
      'usage',
      /field action: must not contain control characters or line breaks/,
    );
    refuses(
      store,
      'todo.add',
      { goalId: 'g', title: 'b', dependsOn: 'a' },
      agent,
      'usage',
      /field dependsOn/,
    );
    refuses(store, 'todo.add', { title: 'b' }, agent, 'usage', /field goalId/);
  });

  it('todo.add with a gate that does not exist requests it at once, guarding the todo', () => {
    const store = withGoal();
    const r = invoke(
      store,
      'todo.add',
      { goalId: 'g', todoId: 'ship', title: 'deploy to prod', gate: 'deploy' },
      agent,
    );
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['todo.added', 'gate.requested'],
    );
    const g = gateOf(store, 'deploy')!;
    assert.equal(g.status, 'pending');
    assert.deepEqual(g.guards, ['ship']);
    assert.deepEqual(g.requestedBy, agent);
    assert.match(g.reason, /todo ship names gate deploy/);
    assert.equal(g.reasonByLoopx, true, 'LoopX wrote that reason, not the requester');
    assert.match(
      gateFacts(store.load('g').state, { v: 1 }, g, 'approve').text,
      /Reason \(LoopX\): todo ship/,
    );
    assert.equal(todoOf(store, 'ship')!.gate, 'deploy');
    // A second todo needing the same gate joins it: still one gate, guarding both.
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'announce', title: 'announce', gate: 'deploy' }, agent);
    assert.equal(state(store).gates.length, 1);
    assert.deepEqual(gateOf(store, 'deploy')!.guards, ['ship', 'announce']);
    assert.equal(gateOf(store, 'deploy')!.status, 'pending');
  });

  it('todo.add with an approved gate asks it again (the approval lists only the work the person saw); with a rejected gate it is refused', () => {
    const store = withGoal();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'ok' }, agent);
    invoke(store, 'gate.approve', { goalId: 'g', gateId: 'ok' }, human, signed(store));
    const r = invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a', gate: 'ok' }, agent);
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['todo.added', 'gate.requested'],
    );
    assert.equal(
      gateOf(store, 'ok')!.status,
      'pending',
      'new work under an approved gate needs a new approval',
    );
    invoke(store, 'gate.approve', { goalId: 'g', gateId: 'ok' }, human, signed(store));
    assert.deepEqual(
      gateOf(store, 'ok')!.approvedFor,
      [{ todoId: 'a', title: 'a' }],
      'the approval lists the work it covers',
    );
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'no' }, agent);
    invoke(store, 'gate.reject', { goalId: 'g', gateId: 'no' }, human, signed(store));
    refuses(
      store,
      'todo.add',
      { goalId: 'g', todoId: 'b', title: 'b', gate: 'no' },
      agent,
      'refused',
      /gate no of goal g was rejected: request it again/,
    );
  });

  it('todo.add follows the workspace policy: a denied action is refused, a gated action requests its gate', () => {
    const store = withGoal();
    setPolicy(store, {
      deniedActions: [{ pattern: 'rm -rf *', reason: 'never delete trees' }],
      gatedActions: [{ pattern: 'git push*', gate: 'push' }],
    });
    refuses(
      store,
      'todo.add',
      { goalId: 'g', title: 'clean', action: 'rm -rf /tmp/x' },
      human,
      'refused',
      /policy denies actions matching "rm -rf \*" \(never delete trees\)/,
      /"rm -rf \/tmp\/x" cannot be a todo action/,
    );
    const r = invoke(
      store,
      'todo.add',
      { goalId: 'g', todoId: 'p', title: 'publish', action: 'git push origin main' },
      human,
    );
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['todo.added', 'gate.requested'],
    );
    assert.equal(todoOf(store, 'p')!.gate, 'push');
    assert.equal(gateOf(store, 'push')!.status, 'pending');
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'p' },
      human,
      'refused',
      /todo p needs gate push approved first/,
    );
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'safe', title: 'test', action: 'npm test' }, human);
    assert.equal(todoOf(store, 'safe')!.gate, undefined);
  });

  it('todo.add: a todo with its own gate and a policy-gated action needs both, and both are asked for at once', () => {
    const store = withGoal();
    setPolicy(store, { gatedActions: [{ pattern: 'git push*', gate: 'push' }] });
    invoke(
      store,
      'todo.add',
      { goalId: 'g', todoId: 'p', title: 'publish', action: 'git push', gate: 'release' },
      human,
    );
    assert.equal(gateOf(store, 'release')?.status, 'pending');
    assert.equal(
      gateOf(store, 'push')?.status,
      'pending',
      'the policy gate is requested too, so the person is asked early',
    );
    invoke(store, 'gate.approve', { goalId: 'g', gateId: 'release' }, human, signed(store));
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'p' },
      human,
      'refused',
      /needs gate push approved first/,
    );
    invoke(store, 'gate.approve', { goalId: 'g', gateId: 'push' }, human, signed(store));
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'p' }, human);
  });

  it('todo.add: a command an agent proposes through a tool waits for a person’s review gate', () => {
    const store = withGoal();
    const cliAgent: Actor = { kind: 'agent', id: 'codex', channel: 'cli' };
    const r = invoke(
      store,
      'todo.add',
      { goalId: 'g', todoId: 'a', title: 'run it', action: 'make deploy' },
      toolAgent,
    );
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['todo.added', 'gate.requested'],
    );
    const review = state(store).gates.find((g) => g.guards.includes('a'))!;
    assert.equal(review.status, 'pending');
    assert.match(review.reason, /proposed a command for todo a/);
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'a' },
      agent,
      'refused',
      new RegExp(`needs gate ${review.id} approved first`),
    );
    // No review for a todo without a command, for a person, or (by default) for an agent on the CLI.
    for (const [id, input, actor] of [
      ['b', {}, agent],
      ['c', { action: 'make deploy' }, human],
      ['d', { action: 'make deploy' }, cliAgent],
    ] as const) {
      const e = invoke(store, 'todo.add', { goalId: 'g', todoId: id, title: id, ...input }, actor);
      assert.deepEqual(
        e.events.map((x) => x.type),
        ['todo.added'],
        id,
      );
    }
  });

  it('todo.claim: an open todo, by the caller or a named holder; claiming again is a no-op; a held todo is refused naming the holder', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent);
    const r = invoke(store, 'todo.claim', { goalId: 'g', todoId: 'a' }, agent);
    assert.deepEqual(
      r.events.map((e) => e.data),
      [{ todoId: 'a', by: 'codex' }],
    );
    assert.deepEqual(
      { status: todoOf(store, 'a')!.status, by: todoOf(store, 'a')!.claimedBy },
      { status: 'claimed', by: 'codex' },
    );
    assert.ok(todoOf(store, 'a')!.claimedAt);
    const again = invoke(store, 'todo.claim', { goalId: 'g', todoId: 'a' }, agent);
    assert.deepEqual(again.events, []);
    refuses(
      store,
      'todo.claim',
      { goalId: 'g', todoId: 'a', by: 'claude' },
      agent,
      'refused',
      /todo a is claimed by codex since .*: only an open todo can be claimed/,
    );
    invoke(store, 'todo.claim', { goalId: 'g', todoId: 'b', by: 'claude' }, human);
    assert.equal(todoOf(store, 'b')!.claimedBy, 'claude');
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'b' }, agent);
    refuses(store, 'todo.claim', { goalId: 'g', todoId: 'b' }, agent, 'refused', /todo b is done/);
    refuses(store, 'todo.claim', { goalId: 'g', todoId: 'zz' }, agent, 'not_found', /no todo "zz"/);
  });

  it('todo.release: a claimed todo goes back to open; an open one is refused', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    refuses(
      store,
      'todo.release',
      { goalId: 'g', todoId: 'a' },
      agent,
      'refused',
      /todo a is open, not claimed/,
    );
    invoke(store, 'todo.claim', { goalId: 'g', todoId: 'a' }, agent);
    invoke(store, 'todo.release', { goalId: 'g', todoId: 'a', reason: 'stuck' }, system);
    const t = todoOf(store, 'a')!;
    assert.deepEqual(
      { status: t.status, by: t.claimedBy, at: t.claimedAt },
      { status: 'open', by: undefined, at: undefined },
    );
  });

  it('todo.update: title, priority, note; nothing to update is a usage error', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(
      store,
      'todo.update',
      { goalId: 'g', todoId: 'a', title: 'A', priority: 'P0', note: 'line\nline' },
      agent,
    );
    const t = todoOf(store, 'a')!;
    assert.deepEqual(
      { title: t.title, priority: t.priority, note: t.note },
      { title: 'A', priority: 'P0', note: 'line\nline' },
    );
    refuses(
      store,
      'todo.update',
      { goalId: 'g', todoId: 'a' },
      agent,
      'usage',
      /nothing to update: give a title, a priority or a note/,
    );
    refuses(
      store,
      'todo.update',
      { goalId: 'g', todoId: 'zz', note: 'x' },
      agent,
      'not_found',
      /no todo "zz"/,
    );
    refuses(
      store,
      'todo.update',
      { goalId: 'g', todoId: 'a', priority: 'high' },
      agent,
      'usage',
      /field priority/,
    );
  });

  it('todo.complete: with evidence ids and a summary (which becomes note evidence) under an open run', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(store, 'run.start', { goalId: 'g', runId: 'run-1', agent: 'codex' }, agent);
    invoke(
      store,
      'evidence.add',
      {
        goalId: 'g',
        evidenceId: 'ev-log',
        runId: 'run-1',
        kind: 'command',
        summary: 'npm test',
        exitCode: 0,
      },
      agent,
    );
    const r = invoke(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'a', evidence: ['ev-log'], summary: 'all green', runId: 'run-1' },
      agent,
    );
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['evidence.added', 'todo.completed'],
    );
    const t = todoOf(store, 'a')!;
    assert.equal(t.status, 'done');
    assert.equal(t.evidence.length, 2);
    assert.ok(t.evidence.includes('ev-log'));
    const note = state(store).evidence.find((e) => e.id !== 'ev-log' && t.evidence.includes(e.id))!;
    assert.deepEqual(
      { kind: note.kind, summary: note.summary, runId: note.runId, todoId: note.todoId },
      { kind: 'note', summary: 'all green', runId: 'run-1', todoId: 'a' },
    );
    assert.equal(effectiveStatus(state(store)), 'completed');
  });

  it('todo.complete refuses: already done, gate not approved, a person’s todo by an agent, unknown evidence, an ended run', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'done', title: 'x' }, agent);
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'done' }, agent);
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'done' },
      agent,
      'refused',
      /todo done is already done/,
    );
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'gated', title: 'x', gate: 'deploy' }, agent);
    const e = refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'gated' },
      agent,
      'refused',
      /todo gated needs gate deploy approved first/,
    );
    assert.equal(e.details.gate, 'deploy');
    invoke(store, 'gate.approve', { goalId: 'g', gateId: 'deploy' }, human, signed(store));
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'gated' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'human', title: 'x', owner: 'user' }, human);
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'human' },
      agent,
      'refused',
      /todo human belongs to a person \(owner user\): an agent cannot complete it/,
    );
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'human' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'ev', title: 'x' }, agent);
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'ev', evidence: ['ev-nope'] },
      agent,
      'not_found',
      /no evidence "ev-nope"/,
    );
    invoke(store, 'run.start', { goalId: 'g', runId: 'r1', agent: 'codex' }, agent);
    invoke(store, 'run.end', { goalId: 'g', runId: 'r1', outcome: 'failed' }, agent);
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'ev', runId: 'r1' },
      agent,
      'refused',
      /run r1 of goal g already ended \(failed\)/,
    );
    invoke(store, 'todo.cancel', { goalId: 'g', todoId: 'ev' }, agent);
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'ev' },
      agent,
      'refused',
      /todo ev is already cancelled/,
    );
  });

  it('todo.cancel: an open or claimed todo, with the reason as its note; a done one is refused', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(store, 'todo.claim', { goalId: 'g', todoId: 'a' }, agent);
    invoke(store, 'todo.cancel', { goalId: 'g', todoId: 'a', reason: 'duplicate' }, agent);
    assert.deepEqual(
      { s: todoOf(store, 'a')!.status, n: todoOf(store, 'a')!.note },
      { s: 'cancelled', n: 'duplicate' },
    );
    refuses(store, 'todo.cancel', { goalId: 'g', todoId: 'a' }, agent, 'refused', /already cancelled/);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'b', title: 'b' }, agent);
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'b' }, agent);
    refuses(store, 'todo.cancel', { goalId: 'g', todoId: 'b' }, agent, 'refused', /todo b is already done/);
  });
});

describe('gate capabilities', () => {
  it('gate.request: pending, guarding named todos; asking again for the same is a no-op; unknown todos are refused', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    const r = invoke(
      store,
      'gate.request',
      { goalId: 'g', gateId: 'db', title: 'Migrate the database', reason: 'drops a column', guards: ['a'] },
      agent,
    );
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['gate.requested'],
    );
    const g = gateOf(store, 'db')!;
    assert.deepEqual(
      { status: g.status, title: g.title, reason: g.reason, guards: g.guards },
      { status: 'pending', title: 'Migrate the database', reason: 'drops a column', guards: ['a'] },
    );
    assert.deepEqual(
      invoke(store, 'gate.request', { goalId: 'g', gateId: 'db', guards: ['a'] }, agent).events,
      [],
    );
    refuses(
      store,
      'gate.request',
      { goalId: 'g', gateId: 'db2', guards: ['zz'] },
      agent,
      'not_found',
      /no todo "zz"/,
    );
    refuses(
      store,
      'gate.request',
      { goalId: 'g', gateId: 'db', title: 'two\nlines' },
      agent,
      'usage',
      /field title/,
    );
  });

  it('gate.request: an approved gate is refused; a rejected or expired one can be asked again', () => {
    const store = withGoal();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'x' }, agent);
    invoke(store, 'gate.approve', { goalId: 'g', gateId: 'x' }, human, signed(store));
    refuses(
      store,
      'gate.request',
      { goalId: 'g', gateId: 'x' },
      agent,
      'refused',
      /gate x of goal g is already approved/,
    );
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'y' }, agent);
    invoke(store, 'gate.reject', { goalId: 'g', gateId: 'y', note: 'not now' }, human, signed(store));
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'y', reason: 'now?' }, agent);
    const y = gateOf(store, 'y')!;
    assert.deepEqual(
      { status: y.status, decidedBy: y.decidedBy, reason: y.reason },
      { status: 'pending', decidedBy: undefined, reason: 'now?' },
    );
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'z' }, agent);
    invoke(store, 'gate.expire', { goalId: 'g', gateId: 'z' }, system);
    assert.equal(gateOf(store, 'z')!.status, 'expired');
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'z' }, agent);
    assert.equal(gateOf(store, 'z')!.status, 'pending');
  });

  it('gate.approve: a person approves a pending gate with a note; it records who and when; twice is refused', () => {
    const store = withGoal();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'x' }, agent);
    invoke(store, 'gate.approve', { goalId: 'g', gateId: 'x', note: 'go ahead' }, vscodeUser, signed(store));
    const x = gateOf(store, 'x')!;
    assert.deepEqual(
      { status: x.status, by: x.decidedBy, note: x.note },
      { status: 'approved', by: vscodeUser, note: 'go ahead' },
    );
    assert.ok(x.decidedAt);
    refuses(
      store,
      'gate.approve',
      { goalId: 'g', gateId: 'x' },
      human,
      'refused',
      /gate x is approved \(by bob at .*\): only a pending gate can be approved/,
    );
    refuses(
      store,
      'gate.approve',
      { goalId: 'g', gateId: 'nope' },
      human,
      'not_found',
      /goal g has no gate "nope"/,
    );
  });

  it('gate.reject cancels the open and claimed todos it guards, and leaves done and unrelated todos alone', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'open', title: 'o', gate: 'deploy' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'held', title: 'h', gate: 'deploy' }, agent);
    invoke(store, 'todo.claim', { goalId: 'g', todoId: 'held' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'free', title: 'f' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'other', title: 'x', gate: 'other' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'finished', title: 'x' }, agent);
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'finished' }, agent);
    // A todo the gate was requested for (gate.request guards), without naming the gate itself.
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'asked', title: 'x' }, agent);
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'deploy', guards: ['asked', 'finished'] }, agent);
    refuses(
      store,
      'todo.complete',
      { goalId: 'g', todoId: 'asked' },
      agent,
      'refused',
      /needs gate deploy approved first/,
    );
    const r = invoke(
      store,
      'gate.reject',
      { goalId: 'g', gateId: 'deploy', note: 'too risky' },
      human,
      signed(store),
    );
    assert.deepEqual(
      r.events.map((e) => [e.type, e.data]),
      [
        [
          'gate.rejected',
          { gateId: 'deploy', note: 'too risky', cancelled: ['open', 'held', 'asked'], basis: null },
        ],
      ],
    );
    assert.equal(gateOf(store, 'deploy')!.status, 'rejected');
    assert.equal(todoOf(store, 'finished')!.status, 'done');
    for (const id of ['open', 'held', 'asked']) {
      assert.equal(todoOf(store, id)!.status, 'cancelled', id);
      assert.match(todoOf(store, id)!.note!, /gate deploy was rejected \(too risky\)/);
    }
    assert.equal(todoOf(store, 'free')!.status, 'open');
    assert.equal(todoOf(store, 'other')!.status, 'open');
    assert.equal(gateOf(store, 'other')!.status, 'pending');
    refuses(
      store,
      'gate.reject',
      { goalId: 'g', gateId: 'deploy' },
      human,
      'refused',
      /gate deploy is rejected \(by alice at [^)]+\): only a pending gate can be rejected/,
    );
  });

  it('gate.expire: the system expires a pending gate; a decided one is refused', () => {
    const store = withGoal();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'x' }, agent);
    invoke(store, 'gate.expire', { goalId: 'g', gateId: 'x' }, system);
    assert.equal(gateOf(store, 'x')!.status, 'expired');
    refuses(
      store,
      'gate.expire',
      { goalId: 'g', gateId: 'x' },
      system,
      'refused',
      /gate x is expired, not pending/,
    );
  });
});

describe('evidence, runs and rewards', () => {
  it('evidence.add: a command result tied to a run and a todo; the todo lists it', () => {
    const store = withGoal();
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a' }, agent);
    invoke(store, 'run.start', { goalId: 'g', runId: 'r1', agent: 'codex' }, agent);
    const artifact = store.writeArtifact('g', 'ev-1', 'ok\n');
    const r = invoke<{ evidenceId: string }>(
      store,
      'evidence.add',
      {
        goalId: 'g',
        evidenceId: 'ev-1',
        runId: 'r1',
        todoId: 'a',
        kind: 'command',
        summary: 'npm test',
        command: 'npm test',
        exitCode: 0,
        durationMs: 1200,
        artifact,
      },
      agent,
    );
    assert.equal(r.input.evidenceId, 'ev-1');
    const ev = state(store).evidence[0]!;
    assert.deepEqual(
      {
        id: ev.id,
        runId: ev.runId,
        todoId: ev.todoId,
        kind: ev.kind,
        exitCode: ev.exitCode,
        artifact: ev.artifact,
        by: ev.by,
      },
      { id: 'ev-1', runId: 'r1', todoId: 'a', kind: 'command', exitCode: 0, artifact, by: agent },
    );
    assert.deepEqual(todoOf(store, 'a')!.evidence, ['ev-1']);
    const gen = invoke<{ evidenceId: string }>(
      store,
      'evidence.add',
      { goalId: 'g', summary: 'a note' },
      agent,
    );
    assert.match(gen.input.evidenceId, /^ev-[0-9a-z]{8}$/);
  });

  it('evidence.add refuses a duplicate id, unknown run or todo, a bad kind and an artifact outside artifacts/', () => {
    const store = withGoal();
    invoke(store, 'evidence.add', { goalId: 'g', evidenceId: 'ev-1', summary: 's' }, agent);
    refuses(
      store,
      'evidence.add',
      { goalId: 'g', evidenceId: 'ev-1', summary: 's' },
      agent,
      'refused',
      /already has evidence ev-1/,
    );
    refuses(
      store,
      'evidence.add',
      { goalId: 'g', runId: 'r9', summary: 's' },
      agent,
      'not_found',
      /no run "r9"/,
    );
    refuses(
      store,
      'evidence.add',
      { goalId: 'g', todoId: 't9', summary: 's' },
      agent,
      'not_found',
      /no todo "t9"/,
    );
    refuses(
      store,
      'evidence.add',
      { goalId: 'g', kind: 'video', summary: 's' },
      agent,
      'usage',
      /field kind/,
    );
    refuses(
      store,
      'evidence.add',
      { goalId: 'g', summary: 's', exitCode: 1.5 },
      agent,
      'usage',
      /field exitCode/,
    );
    const artifact = { path: '../../../etc/passwd', sha256: 'a'.repeat(64), bytes: 1 };
    refuses(
      store,
      'evidence.add',
      { goalId: 'g', summary: 's', artifact },
      agent,
      'usage',
      /field artifact\.path/,
    );
  });

  it('run.start opens a run (one turn spent); run.spend adds up; run.end closes it with outcome and spend', () => {
    const store = withGoal();
    const r = invoke<{ runId: string }>(store, 'run.start', { goalId: 'g', agent: 'codex' }, agent);
    assert.match(r.input.runId, /^run-[0-9a-z]{8}$/);
    const id = r.input.runId;
    invoke(store, 'run.spend', { goalId: 'g', runId: id, tokens: 500, costUsd: 0.1 }, agent);
    invoke(store, 'run.spend', { goalId: 'g', runId: id, tokens: 250 }, agent);
    invoke(
      store,
      'run.end',
      { goalId: 'g', runId: id, outcome: 'partial', summary: 'half way', wallSeconds: 90, costUsd: 0.05 },
      agent,
    );
    const run = state(store).runs[0]!;
    assert.equal(run.outcome, 'partial');
    assert.equal(run.summary, 'half way');
    assert.ok(run.endedAt);
    assert.equal(run.spend.turns, 1);
    assert.equal(run.spend.tokens, 750);
    assert.ok(Math.abs(run.spend.costUsd - 0.15) < 1e-9);
    assert.equal(run.spend.wallSeconds, 90);
  });

  it('runs refuse: a duplicate id, a paused goal, spend on an ended run, a second end, a bad outcome, negative spend', () => {
    const store = withGoal();
    invoke(store, 'run.start', { goalId: 'g', runId: 'r1', agent: 'codex' }, agent);
    refuses(
      store,
      'run.start',
      { goalId: 'g', runId: 'r1', agent: 'codex' },
      agent,
      'refused',
      /already has a run r1/,
    );
    refuses(store, 'run.spend', { goalId: 'g', runId: 'r1', tokens: -5 }, agent, 'usage', /field tokens/);
    refuses(
      store,
      'run.end',
      { goalId: 'g', runId: 'r1', outcome: 'great' },
      agent,
      'usage',
      /field outcome/,
    );
    invoke(store, 'run.end', { goalId: 'g', runId: 'r1', outcome: 'succeeded' }, agent);
    refuses(
      store,
      'run.spend',
      { goalId: 'g', runId: 'r1', tokens: 5 },
      agent,
      'refused',
      /run r1 of goal g already ended \(succeeded\)/,
    );
    refuses(
      store,
      'run.end',
      { goalId: 'g', runId: 'r1', outcome: 'failed' },
      agent,
      'refused',
      /already ended/,
    );
    refuses(store, 'run.spend', { goalId: 'g', runId: 'r9', tokens: 5 }, agent, 'not_found', /no run "r9"/);
    invoke(store, 'goal.pause', { goalId: 'g' }, human);
    refuses(
      store,
      'run.start',
      { goalId: 'g', runId: 'r2', agent: 'codex' },
      agent,
      'refused',
      /goal g is paused: no run can start/,
    );
  });

  it('reward.add: a person scores a run with a comment and a lesson; the channel is recorded', () => {
    const store = withGoal();
    invoke(store, 'run.start', { goalId: 'g', runId: 'r1', agent: 'codex' }, agent);
    const r = invoke<{ rewardId: string }>(
      store,
      'reward.add',
      { goalId: 'g', runId: 'r1', score: -0.5, comment: 'missed the edge case', lesson: 'test empty input' },
      vscodeUser,
      signed(store),
    );
    assert.match(r.input.rewardId, /^rw-[0-9a-z]{8}$/);
    const rw = state(store).rewards[0]!;
    assert.deepEqual(
      { runId: rw.runId, score: rw.score, comment: rw.comment, lesson: rw.lesson, by: rw.by },
      {
        runId: 'r1',
        score: -0.5,
        comment: 'missed the edge case',
        lesson: 'test empty input',
        by: vscodeUser,
      },
    );
  });

  it('reward.add refuses a score out of [-1, 1], an unknown run, and an agent', () => {
    const store = withGoal();
    invoke(store, 'run.start', { goalId: 'g', runId: 'r1', agent: 'codex' }, agent);
    refuses(
      store,
      'reward.add',
      { goalId: 'g', runId: 'r1', score: 1.5 },
      human,
      'usage',
      /^reward\.add: field score/,
    );
    refuses(store, 'reward.add', { goalId: 'g', runId: 'r1', score: 'good' }, human, 'usage', /field score/);
    refuses(store, 'reward.add', { goalId: 'g', runId: 'r9', score: 1 }, human, 'not_found', /no run "r9"/);
    refuses(
      store,
      'reward.add',
      { goalId: 'g', runId: 'r1', score: 1 },
      agent,
      'refused',
      /reward\.add is human-only/,
    );
  });
});

describe('quota capabilities', () => {
  const quota = (turns: number | undefined, extra: Record<string, unknown> = {}) => ({
    budgets: turns === undefined ? {} : { turns },
    window: { kind: 'life' },
    cooldownSeconds: 0,
    ...extra,
  });

  it('quota.set by a person may raise or lower anything', () => {
    const store = withGoal();
    invoke(
      store,
      'quota.set',
      { goalId: 'g', quota: quota(1000, { window: { kind: 'rolling', hours: 12 } }) },
      human,
      signed(store),
    );
    assert.deepEqual(state(store).quota, quota(1000, { window: { kind: 'rolling', hours: 12 } }));
    invoke(store, 'quota.set', { goalId: 'g', quota: quota(undefined) }, human, signed(store));
    assert.deepEqual(state(store).quota.budgets, {});
  });

  it('quota.set by an agent may only tighten: lower budgets, add a budget, longer cooldown', () => {
    const store = withGoal(); // default quota: 200 turns, life, no cooldown
    invoke(
      store,
      'quota.set',
      {
        goalId: 'g',
        quota: { budgets: { turns: 100, costUsd: 5 }, window: { kind: 'life' }, cooldownSeconds: 60 },
      },
      agent,
      signed(store),
    );
    assert.deepEqual(state(store).quota, {
      budgets: { turns: 100, costUsd: 5 },
      window: { kind: 'life' },
      cooldownSeconds: 60,
    });
    invoke(
      store,
      'quota.set',
      {
        goalId: 'g',
        quota: { budgets: { turns: 100, costUsd: 5 }, window: { kind: 'life' }, cooldownSeconds: 60 },
      },
      system,
      signed(store),
    );
  });

  it('quota.set by an agent is refused when it would loosen anything, naming what', () => {
    const store = withGoal();
    invoke(
      store,
      'quota.set',
      {
        goalId: 'g',
        quota: { budgets: { turns: 100, costUsd: 5 }, window: { kind: 'life' }, cooldownSeconds: 60 },
      },
      human,
      signed(store),
    );
    const base = { budgets: { turns: 100, costUsd: 5 }, window: { kind: 'life' }, cooldownSeconds: 60 };
    const e = refuses(
      store,
      'quota.set',
      { goalId: 'g', quota: { ...base, budgets: { turns: 101, costUsd: 5 } } },
      agent,
      'refused',
      /^an agent may only tighten a quota, and this would raise the turns budget from 100 to 101; more budget is a person's grant, at a terminal: `loopx quota grant --goal-id g --turns N`$/,
    );
    assert.deepEqual(e.details.loosened, ['turns']);
    refuses(
      store,
      'quota.set',
      { goalId: 'g', quota: { ...base, budgets: { turns: 100 } } },
      agent,
      'refused',
      /would drop the cost budget \(\$5\); .*`loopx quota grant --goal-id g --cost N`/,
    );
    refuses(
      store,
      'quota.set',
      { goalId: 'g', quota: { ...base, cooldownSeconds: 0 } },
      agent,
      'refused',
      /would shorten the cooldown from 1 min to 0 s; a shorter cooldown or another window is a person’s change: they run this `loopx quota set` at a terminal, where it asks for their key’s passphrase$/,
    );
    refuses(
      store,
      'quota.set',
      { goalId: 'g', quota: { ...base, window: { kind: 'rolling', hours: 24 } } },
      agent,
      'refused',
      /would count spend over the last 24 h instead of the goal’s life; /,
    );
    refuses(
      store,
      'quota.set',
      { goalId: 'g', quota: { budgets: { turns: 500 }, window: { kind: 'life' }, cooldownSeconds: 0 } },
      agent,
      'refused',
      /would raise the turns budget from 100 to 500, drop the cost budget \(\$5\), shorten the cooldown from 1 min to 0 s; .*--turns N --cost N`; a shorter cooldown/,
    );
    refuses(
      store,
      'quota.set',
      { goalId: 'g', quota: { ...base, cooldownSeconds: -1 } },
      human,
      'usage',
      /field quota\.cooldownSeconds/,
    );
    assert.deepEqual(state(store).quota, base);
  });

  it('quota.grant: a person adds budget, grants add up; an agent is refused; a grant of nothing is a usage error', () => {
    const store = withGoal();
    invoke(
      store,
      'quota.grant',
      { goalId: 'g', budgets: { turns: 10, costUsd: 1.5 }, note: 'one more day' },
      human,
      signed(store),
    );
    invoke(store, 'quota.grant', { goalId: 'g', budgets: { turns: 5 } }, vscodeUser, signed(store));
    assert.deepEqual(state(store).granted, { turns: 15, costUsd: 1.5 });
    refuses(
      store,
      'quota.grant',
      { goalId: 'g', budgets: { turns: 10 } },
      agent,
      'refused',
      /quota\.grant is human-only/,
      /agent codex via cli/,
    );
    refuses(
      store,
      'quota.grant',
      { goalId: 'g', budgets: { turns: 0 } },
      human,
      'usage',
      /a grant needs at least one positive amount/,
    );
    refuses(
      store,
      'quota.grant',
      { goalId: 'g', budgets: { turns: -3 } },
      human,
      'usage',
      /field budgets\.turns/,
    );
  });
});

describe('finished goals', () => {
  for (const end of ['close', 'cancel'] as const) {
    const status = end === 'close' ? 'closed' : 'cancelled';
    it(`a ${status} goal is read-only for every capability but reward.add and ending its runs`, () => {
      const store = withGoal();
      invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'a', gate: 'x' }, agent);
      invoke(store, 'run.start', { goalId: 'g', runId: 'r1', agent: 'codex' }, agent);
      invoke(store, `goal.${end}`, { goalId: 'g' }, human);
      const calls: [string, Record<string, unknown>, Actor][] = [
        ['goal.pause', {}, human],
        ['goal.resume', {}, human],
        ['goal.close', {}, human],
        ['goal.cancel', {}, human],
        ['todo.add', { title: 'more' }, agent],
        ['todo.claim', { todoId: 'a' }, agent],
        ['todo.update', { todoId: 'a', note: 'n' }, agent],
        ['todo.complete', { todoId: 'a' }, human],
        ['todo.cancel', { todoId: 'a' }, agent],
        ['gate.request', { gateId: 'y' }, agent],
        ['gate.approve', { gateId: 'x' }, human],
        ['gate.reject', { gateId: 'x' }, human],
        ['gate.expire', { gateId: 'x' }, system],
        ['evidence.add', { summary: 's' }, agent],
        ['run.start', { agent: 'codex' }, agent],
        ['run.spend', { runId: 'r1', tokens: 1 }, agent],
        ['quota.set', { quota: { budgets: {}, window: { kind: 'life' }, cooldownSeconds: 0 } }, human],
        ['quota.grant', { budgets: { turns: 1 } }, human],
      ];
      for (const [cap, input, actor] of calls) {
        const e = refuses(
          store,
          cap,
          { goalId: 'g', ...input },
          actor,
          'refused',
          new RegExp(
            `goal g is ${status}: a ${status} goal is read-only \\(${cap.replace('.', '\\.')} refused\\)`,
          ),
        );
        assert.equal(e.details.capability, cap);
      }
      const r = invoke(
        store,
        'reward.add',
        { goalId: 'g', runId: 'r1', score: 1, comment: 'good work after all' },
        human,
        signed(store),
      );
      assert.deepEqual(
        r.events.map((ev) => ev.type),
        ['reward.added'],
      );
      assert.equal(state(store).status, status);
      assert.equal(state(store).rewards.length, 1);
      // A run left open when the goal was finished can still be ended (summary_all, self-repair).
      const ended = invoke(store, 'run.end', { goalId: 'g', runId: 'r1', outcome: 'abandoned' }, agent);
      assert.deepEqual(
        ended.events.map((ev) => ev.type),
        ['run.ended'],
      );
      assert.equal(state(store).status, status);
    });
  }
});

describe('reason codes', () => {
  /** A refusal's machine-readable code: `details.reason`, and `reason` on the error. */
  function reasonOf(
    store: Store,
    cap: string,
    input: Record<string, unknown>,
    actor: Actor,
    kind: LoopxError['kind'] = 'refused',
  ): string {
    const e = refuses(store, cap, { goalId: 'g', ...input }, actor, kind);
    assert.equal(e.reason, e.details.reason ?? e.kind);
    return e.reason;
  }

  it('every todo refusal says what happened, as a code', () => {
    const store = withGoal();
    setPolicy(store, { deniedActions: [{ pattern: 'rm -rf *' }] });
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'a', title: 'A' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'gated', title: 'G', gate: 'prod' }, agent);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'mine', title: 'M', owner: 'user' }, human);
    invoke(store, 'todo.add', { goalId: 'g', todoId: 'held', title: 'H' }, agent);
    invoke(store, 'todo.claim', { goalId: 'g', todoId: 'held', by: 'other-agent' }, agent);
    assert.equal(reasonOf(store, 'todo.add', { todoId: 'a', title: 'again' }, agent), 'todo_exists');
    assert.equal(reasonOf(store, 'todo.add', { title: 'wipe', action: 'rm -rf /' }, agent), 'policy_denied');
    assert.equal(reasonOf(store, 'todo.complete', { todoId: 'gated' }, agent), 'gate_not_approved');
    assert.equal(reasonOf(store, 'todo.complete', { todoId: 'mine' }, agent), 'todo_owned_by_person');
    assert.equal(reasonOf(store, 'todo.release', { todoId: 'a' }, agent), 'todo_not_claimed');
    assert.equal(reasonOf(store, 'todo.claim', { todoId: 'held', by: 'me' }, agent), 'claimed_by_other');
    invoke(store, 'todo.complete', { goalId: 'g', todoId: 'a' }, agent);
    assert.equal(reasonOf(store, 'todo.complete', { todoId: 'a' }, agent), 'todo_finished');
    assert.equal(reasonOf(store, 'todo.cancel', { todoId: 'a' }, agent), 'todo_finished');
    assert.equal(reasonOf(store, 'todo.claim', { todoId: 'a' }, agent), 'todo_finished');
    // Not a refusal, no code given: the reason is the kind.
    assert.equal(reasonOf(store, 'todo.claim', { todoId: 'nope' }, agent, 'not_found'), 'not_found');
  });

  it('gates, runs, actors and finished goals too', () => {
    const store = withGoal();
    invoke(store, 'gate.request', { goalId: 'g', gateId: 'prod', reason: 'deploy' }, agent);
    invoke(store, 'gate.expire', { goalId: 'g', gateId: 'prod' }, system);
    assert.equal(reasonOf(store, 'gate.expire', { gateId: 'prod' }, system), 'gate_not_pending');
    assert.equal(reasonOf(store, 'gate.approve', { gateId: 'prod' }, agent), 'human_only');
    assert.equal(reasonOf(store, 'quota.grant', { budgets: { turns: 1 } }, system), 'human_only');
    invoke(store, 'run.start', { goalId: 'g', runId: 'r1', agent: 'codex' }, agent);
    assert.equal(reasonOf(store, 'run.start', { runId: 'r1', agent: 'codex' }, agent), 'run_exists');
    invoke(store, 'run.end', { goalId: 'g', runId: 'r1', outcome: 'succeeded' }, agent);
    assert.equal(reasonOf(store, 'run.end', { runId: 'r1', outcome: 'failed' }, agent), 'run_ended');
    assert.equal(reasonOf(store, 'run.spend', { runId: 'r1', tokens: 1 }, agent), 'run_ended');
    invoke(store, 'goal.cancel', { goalId: 'g' }, human);
    assert.equal(reasonOf(store, 'todo.add', { title: 'late' }, agent), 'goal_finished');
  });
});
