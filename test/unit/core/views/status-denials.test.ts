/**
 * What the hooks refused an agent, as status shows it: the latest refusals in the goal's document
 * (newest first, at most DENIALS_SHOWN, the total), the count per goal in the overview, a run's
 * tokens by kind, and the attention rule: one agent refused again and again within the hour, or
 * once trying a person's decision or LoopX's state.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { invoke } from '../../../../src/core/capabilities/registry';
import { goalStatus, statusAll, attentionChangesWithTime } from '../../../../src/core/views/status';
import { GoalStatusDoc, StatusDoc } from '../../../../src/core/views/status-doc';
import {
  DENIALS_SHOWN,
  DENIAL_REPEATS,
  DENIAL_WINDOW_MS,
  TRUST_DENY_CODES,
  denialAttention,
  denialSubject,
} from '../../../../src/core/views/denials-doc';
import type { Actor, DenyCode } from '../../../../src/core/model/goal-state';
import type { Store } from '../../../../src/core/store/store';
import { agent, human, removeTempDirs, settleIndex } from '../../../helpers/store';
import { goalFixture } from '../../../helpers/contract-kit';

after(removeTempDirs);

const HOOK: Actor = { kind: 'system', id: 'loopx-hook', channel: 'hook' };
const MIN = 60_000;

/** A refusal recorded the way the PreToolUse hook records it. */
function deny(
  store: Store,
  goalId: string,
  d: { agent?: string; command?: string; path?: string; code?: DenyCode; enforced?: boolean; tool?: string },
) {
  invoke(
    store,
    'agent.deny',
    {
      goalId,
      agent: d.agent ?? 'claude-code-1a2b3c4d',
      tool: d.tool ?? (d.path ? 'Write' : 'Bash'),
      command: d.command ?? (d.path ? undefined : 'rm -rf build'),
      path: d.path,
      code: d.code ?? 'no_contract',
      reason: `LoopX: \`${d.command ?? d.path ?? 'rm -rf build'}\` is not allowed`,
      enforced: d.enforced ?? true,
    },
    HOOK,
  );
}

const deniedAttention = (store: Store, goalId: string) =>
  goalStatus(store, goalId).attention.filter((a) => a.kind === 'denied');

describe('status: what the hooks refused', () => {
  it('the goal document lists the latest refusals newest first, in snake_case, with the total', () => {
    const { store, goalId, clock } = goalFixture();
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'codex' }, agent);
    clock.advance(MIN);
    deny(store, goalId, { agent: 'codex', command: 'make deploy', code: 'not_listed' });
    clock.advance(MIN);
    deny(store, goalId, { path: '/w/.loopx/policy.json', code: 'loopx_state' });
    clock.advance(MIN);
    deny(store, goalId, { command: 'curl x | sh', enforced: false });
    const doc = goalStatus(store, goalId);
    assert.ok(GoalStatusDoc.safeParse(doc).success);
    assert.equal(doc.denied_total, 3);
    assert.deepEqual(
      doc.denied.map((d) => [d.tool, d.command ?? d.path, d.code, d.enforced]),
      [
        ['Bash', 'curl x | sh', 'no_contract', false],
        ['Write', '/w/.loopx/policy.json', 'loopx_state', true],
        ['Bash', 'make deploy', 'not_listed', true],
      ],
    );
    const events = store.readLog(goalId).events.filter((e) => e.type === 'agent.denied');
    assert.deepEqual(doc.denied[2], {
      event_id: events[0]!.id,
      at: events[0]!.ts,
      agent: 'codex',
      tool: 'Bash',
      command: 'make deploy',
      code: 'not_listed',
      reason: 'LoopX: `make deploy` is not allowed',
      enforced: true,
    });
    assert.equal(doc.denied[1]!.command, undefined, 'a Write has a path, no command');
  });

  it('at most DENIALS_SHOWN are listed; the total counts every one, as does the overview', () => {
    const { store, goalId } = goalFixture();
    for (let i = 0; i < DENIALS_SHOWN + 7; i++) deny(store, goalId, { command: `make t${i}` });
    const doc = goalStatus(store, goalId);
    assert.equal(doc.denied.length, DENIALS_SHOWN);
    assert.equal(doc.denied_total, DENIALS_SHOWN + 7);
    assert.equal(doc.denied[0]!.command, `make t${DENIALS_SHOWN + 6}`, 'newest first');
    assert.equal(doc.denied.at(-1)!.command, 'make t7');
    invoke(store, 'goal.create', { goalId: 'calm', title: 'Nothing refused' }, human);
    settleIndex(store);
    const all = statusAll(store);
    assert.ok(StatusDoc.safeParse(all).success);
    assert.deepEqual(Object.fromEntries(all.goals.map((g) => [g.id, g.denied])), {
      [goalId]: DENIALS_SHOWN + 7,
      calm: 0,
    });
    const calm = goalStatus(store, 'calm');
    assert.deepEqual([calm.denied, calm.denied_total], [[], 0]);
  });

  it('a run shows its tokens by kind when a host transcript gave them, and nothing made up when not', () => {
    const { store, goalId } = goalFixture();
    invoke(store, 'run.start', { goalId, runId: 'r1', agent: 'claude' }, agent);
    invoke(store, 'run.start', { goalId, runId: 'r2', agent: 'codex' }, agent);
    invoke(
      store,
      'run.capture',
      {
        goalId,
        runId: 'r1',
        messages: [
          {
            key: '0123456789abcdef',
            model: 'claude-sonnet-4-5',
            usage: { input: 1200, output: 300, cacheWrite: 5000, cacheRead: 20000 },
          },
        ],
      },
      HOOK,
    );
    const doc = goalStatus(store, goalId);
    const r1 = doc.runs.find((r) => r.id === 'r1')!;
    assert.deepEqual(r1.usage, { input: 1200, output: 300, cache_write: 5000, cache_read: 20000 });
    assert.equal(r1.spend.tokens, 26500);
    assert.equal(doc.runs.find((r) => r.id === 'r2')!.usage, undefined, 'no transcript, no breakdown');
    assert.ok(GoalStatusDoc.safeParse(doc).success);
  });
});

describe('attention: an agent the hooks keep refusing', () => {
  it(`${DENIAL_REPEATS} refusals of one agent within the hour need a look; ${DENIAL_REPEATS - 1} do not`, () => {
    const { store, goalId, clock } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 't', title: 't', action: 'true' }, agent);
    deny(store, goalId, { agent: 'codex', command: 'make a' });
    clock.advance(20 * MIN);
    deny(store, goalId, { agent: 'codex', command: 'make b' });
    // Another agent's refusals do not add up with codex's.
    deny(store, goalId, { agent: 'claude', command: 'make c' });
    assert.deepEqual(deniedAttention(store, goalId), []);
    clock.advance(20 * MIN);
    deny(store, goalId, { agent: 'codex', command: 'git push --force\n  origin main' });
    const items = deniedAttention(store, goalId);
    assert.deepEqual(items, [
      {
        kind: 'denied',
        goal_id: goalId,
        id: 'codex',
        title: 'codex was refused 3 times',
        detail: '3 refusals in the last hour; the latest: git push --force origin main',
      },
    ]);
  });

  it('refusals spread over more than an hour do not; the item goes once the hour has passed', () => {
    const { store, goalId, clock } = goalFixture();
    invoke(store, 'todo.add', { goalId, todoId: 't', title: 't', action: 'true' }, agent);
    deny(store, goalId, { command: 'make a' });
    clock.advance(31 * MIN);
    deny(store, goalId, { command: 'make b' });
    clock.advance(30 * MIN);
    deny(store, goalId, { command: 'make c' });
    assert.deepEqual(deniedAttention(store, goalId), [], 'the first one is more than an hour old');
    deny(store, goalId, { command: 'make d' });
    assert.equal(deniedAttention(store, goalId).length, 1);
    const state = () => store.load(goalId).state;
    assert.equal(attentionChangesWithTime(state(), new Date(store.now())), true);
    clock.advance(DENIAL_WINDOW_MS - 30 * MIN);
    assert.deepEqual(deniedAttention(store, goalId), [], 'only make c and make d are within the hour now');
    clock.advance(30 * MIN + 1);
    assert.equal(attentionChangesWithTime(state(), new Date(store.now())), false, 'nothing left to expire');
  });

  it('observe mode counts too, and says the latest was let through', () => {
    const { store, goalId } = goalFixture();
    for (const command of ['make a', 'make b', 'make deploy'])
      deny(store, goalId, { agent: 'codex', command, enforced: false });
    assert.equal(
      deniedAttention(store, goalId)[0]!.detail,
      '3 refusals in the last hour; the latest (observe mode: let through): make deploy',
    );
  });

  it('a person’s decision, LoopX state or the config folder need a look at the first try', () => {
    const { store, goalId, clock } = goalFixture();
    assert.deepEqual(TRUST_DENY_CODES, ['human_only', 'loopx_state', 'config_folder', 'hook_file']);
    deny(store, goalId, {
      agent: 'codex',
      command: 'loopx gate approve --goal-id g --gate-id deploy',
      code: 'human_only',
    });
    clock.advance(MIN);
    deny(store, goalId, { agent: 'claude', path: '/w/.loopx/policy.json', code: 'loopx_state' });
    clock.advance(MIN);
    deny(store, goalId, {
      agent: 'gemini',
      path: '/home/u/.config/loopx/keys/k.json',
      code: 'config_folder',
    });
    clock.advance(MIN);
    deny(store, goalId, { agent: 'copilot', command: 'make deploy', code: 'not_listed' });
    assert.deepEqual(
      deniedAttention(store, goalId).map((a) => [a.id, a.title, a.detail]),
      [
        [
          'gemini',
          'gemini tried to reach the LoopX config folder',
          '1 refusal in the last hour; the latest: /home/u/.config/loopx/keys/k.json',
        ],
        [
          'claude',
          'claude tried to change LoopX’s state directly',
          '1 refusal in the last hour; the latest: /w/.loopx/policy.json',
        ],
        [
          'codex',
          'codex tried to make a person’s decision',
          '1 refusal in the last hour; the latest: loopx gate approve --goal-id g --gate-id deploy',
        ],
      ],
      'the most recent first; copilot’s one ordinary refusal is not there',
    );
    // The trust code names the item even when a later refusal of the same agent is an ordinary one.
    deny(store, goalId, { agent: 'codex', command: 'make x', code: 'not_listed' });
    const codex = deniedAttention(store, goalId).find((a) => a.id === 'codex')!;
    assert.equal(codex.title, 'codex tried to make a person’s decision');
    assert.equal(codex.detail, '2 refusals in the last hour; the latest: make x');
    assert.equal(deniedAttention(store, goalId)[0]!.id, 'codex', 'now the most recent');
  });

  it('comes in order after gates and a person’s todos, and not at all on a closed goal', () => {
    const { store, goalId } = goalFixture();
    invoke(
      store,
      'todo.add',
      { goalId, todoId: 'a', title: 'a', action: 'sh deploy.sh', gate: 'ship' },
      agent,
    );
    invoke(store, 'todo.add', { goalId, todoId: 'u', title: 'pick', owner: 'user' }, human);
    deny(store, goalId, { command: 'loopx gate approve --goal-id g --gate-id ship', code: 'human_only' });
    assert.deepEqual(
      goalStatus(store, goalId).attention.map((a) => a.kind),
      ['gate', 'user-todo', 'denied'],
    );
    invoke(store, 'goal.close', { goalId }, human);
    deny(store, goalId, { command: 'loopx gate approve --goal-id g --gate-id ship', code: 'human_only' });
    assert.deepEqual(goalStatus(store, goalId).attention, [], 'a closed goal asks nothing of anyone');
    assert.equal(goalStatus(store, goalId).denied_total, 2, 'the attempt is still on record');
  });

  it('is one rule over the state: what status shows is denialAttention', () => {
    const { store, goalId } = goalFixture();
    for (let i = 0; i < DENIAL_REPEATS; i++) deny(store, goalId, { command: `make ${i}` });
    const state = store.load(goalId).state;
    assert.deepEqual(denialAttention(state, new Date(store.now())), deniedAttention(store, goalId));
  });
});

describe('what was tried, on one line', () => {
  it('the command, else the path, else the tool; line breaks become spaces; long text is cut whole', () => {
    assert.equal(denialSubject({ tool: 'Bash', command: 'a\n\tb  c' }), 'a b c');
    assert.equal(denialSubject({ tool: 'Write', path: '/w/x' }), '/w/x');
    assert.equal(denialSubject({ tool: 'WebFetch' }), 'WebFetch');
    assert.equal(denialSubject({ tool: 'Bash', command: '   ' }), 'Bash');
    assert.equal(denialSubject({ tool: 'Bash', command: 'x'.repeat(100) }, 10), `${'x'.repeat(10)}…`);
    assert.equal(
      denialSubject({ tool: 'Bash', command: `ab${'😀'.repeat(5)}` }, 3),
      'ab😀…',
      'no half emoji',
    );
  });
});
