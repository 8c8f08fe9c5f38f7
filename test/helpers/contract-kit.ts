/**
 * Shared pieces of the contract, exec, round-trip, status and repair tests: a goal on a manual
 * clock, quota and policy shorthands, error assertions and a log rewriter that keeps the hash
 * chain intact (so only the contract's HMAC can catch a changed contract).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { Store } from '../../src/core/store/store';
import { invoke } from '../../src/core/capabilities/registry';
import { LoopxError } from '../../src/core/model/errors';
import type { LoopxEvent } from '../../src/core/model/events';
import type { Budgets, GoalState, Quota } from '../../src/core/model/goal-state';
import type { Policy } from '../../src/core/model/policy';
import { human, manualClock, tempDir, writeSignedPolicy } from './store';

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export function quota(budgets: Budgets = {}, more: Partial<Omit<Quota, 'budgets'>> = {}): Quota {
  return { budgets, window: more.window ?? { kind: 'life' }, cooldownSeconds: more.cooldownSeconds ?? 0 };
}

export interface Fixture {
  store: Store;
  clock: ReturnType<typeof manualClock>;
  goalId: string;
}

/** A fresh store on a manual clock with one goal `g` (and the policy, when given, written first). */
export function goalFixture(
  opts: { quota?: Quota; policy?: Omit<Policy, 'v'>; goalId?: string } = {},
): Fixture {
  const clock = manualClock();
  const store = Store.init(tempDir(), { clock: clock.now });
  if (opts.policy) writePolicy(store, opts.policy);
  const goalId = opts.goalId ?? 'g';
  invoke(
    store,
    'goal.create',
    { goalId, title: 'A goal', objective: 'prove the contract', quota: opts.quota ?? quota({ turns: 100 }) },
    human,
  );
  return { store, clock, goalId };
}

/** A policy a person wrote and signed. */
export const writePolicy = writeSignedPolicy;

/** Asserts that `fn` throws a LoopxError of one of `kinds` whose message matches every pattern. */
export function throwsLoopx(
  fn: () => unknown,
  kinds: LoopxError['kind'] | LoopxError['kind'][],
  ...patterns: RegExp[]
): LoopxError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  return checkLoopx(caught, kinds, patterns);
}

export async function rejectsLoopx(
  fn: () => Promise<unknown>,
  kinds: LoopxError['kind'] | LoopxError['kind'][],
  ...patterns: RegExp[]
): Promise<LoopxError> {
  let caught: unknown;
  try {
    await fn();
  } catch (e) {
    caught = e;
  }
  return checkLoopx(caught, kinds, patterns);
}

function checkLoopx(
  caught: unknown,
  kinds: LoopxError['kind'] | LoopxError['kind'][],
  patterns: RegExp[],
): LoopxError {
  const want = Array.isArray(kinds) ? kinds : [kinds];
  assert.ok(
    caught instanceof LoopxError,
    `expected a LoopxError (${want.join('|')}), got ${caught === undefined ? 'no error' : String(caught)}`,
  );
  assert.ok(want.includes(caught.kind), `kind ${caught.kind} not in ${want.join('|')}: ${caught.message}`);
  for (const p of patterns) assert.match(caught.message, p);
  return caught;
}

/**
 * Rewrites a goal's whole log through its parsed events, recomputing every `prev` so the hash
 * chain stays valid, then rebuilds the snapshot: a consistent forgery of history.
 */
export function rewriteLog(store: Store, goalId: string, edit: (events: LoopxEvent[]) => void): void {
  const { events } = store.readLog(goalId);
  edit(events);
  let prev: string | null = null;
  const lines = events.map((ev) => {
    const line = JSON.stringify({ ...ev, prev });
    prev = sha256(line);
    return line;
  });
  fs.writeFileSync(store.logPath(goalId), lines.join('\n') + '\n');
  store.rebuildSnapshot(goalId);
}

/** sha256 of every file under `dir` (relative path -> hash), to prove nothing changed. */
export function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  (function walk(d: string) {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.statSync(p);
      if (st.isDirectory()) {
        out[path.relative(dir, p) + '/'] = 'dir';
        walk(p);
      } else out[path.relative(dir, p)] = sha256(fs.readFileSync(p));
    }
  })(dir);
  return out;
}

export interface WrappedAction {
  contractId: string;
  todoId: string;
  command: string;
}

/**
 * Splits `loopx exec --contract C --todo T -- <word>` and lets a real POSIX shell unquote the
 * word, which is what an executor that `eval`s the line gets.
 */
export function parseWrapped(line: string): WrappedAction {
  const m = /^loopx exec --contract (\S+) --todo (\S+) -- (.+)$/s.exec(line);
  assert.ok(m, `not a wrapped exec line: ${line}`);
  const r = spawnSync('/bin/sh', ['-c', `printf '%s' ${m[3]}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return { contractId: m[1]!, todoId: m[2]!, command: r.stdout };
}

/**
 * Edits the state inside a goal's goal.json the way a person with an editor would, leaving the
 * header (and so its MAC) as it was.
 */
export function forgeSnapshotState(store: Store, goalId: string, edit: (state: GoalState) => void): void {
  store.rebuildSnapshot(goalId); // a snapshot may lag the log by a few events: start from a current one
  const file = store.snapshotPath(goalId);
  const [header, stateText] = fs.readFileSync(file, 'utf8').split('\n');
  const state = JSON.parse(stateText!) as GoalState;
  edit(state);
  fs.writeFileSync(file, `${header}\n${JSON.stringify(state)}\n`);
}
