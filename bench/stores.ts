/**
 * The stores the bench measures, generated through the core: each goal is one commit of its
 * whole history, and the goal the per-goal calls read has 8 writers' logs (team mode: one log per
 * clone, as after a pull). Also what a call needs set up before it is timed: a contract that
 * lists `true`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Store, invoke, newKeyPair, pinKey, shouldRun, signerFor, summaryAll } from '../src/core/index';
import type { Actor, EventDraft, ShouldRunOutput, Signer } from '../src/core/index';
import { draft } from '../src/core/model';
import { writersDir } from '../src/core/store';
import { ownConfigDir } from '../scripts/test/own-config-dir.mjs';

// The bench's stores keep their keys in a config folder of the run's own (as scripts/test/run-suite.mjs
// gives the tests), never in the user's ~/.config/loopx; child processes inherit it.
const config = ownConfigDir('loopx-bench-config-');
process.env.LOOPX_CONFIG_DIR = config.env.LOOPX_CONFIG_DIR;
process.on('exit', config.cleanup);
/** Stores still on disk: removed on exit, also when a run fails half-way. */
const made = new Set<string>();
process.on('exit', () => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

export const person: Actor = { kind: 'user', id: 'bench', channel: 'cli' };
/** The agent every timed call acts as (LOOPX_AGENT in the CLI's environment). */
export const AGENT = 'bench-agent';
export const agent: Actor = { kind: 'agent', id: AGENT, channel: 'cli' };
export const agentEnv: NodeJS.ProcessEnv = { LOOPX_AGENT: AGENT };

/** Writers of the measured goal: this store's own log and 7 clones'. */
export const WRITERS = 8;
/** Events each clone adds to the measured goal (the same in --quick, so the store is too). */
const PER_CLONE = 40;

/** The bench person's key, pinned in the run's config folder: a person's decisions are signed. */
export function benchSigner(store: Store): Signer {
  const { privateKey, pub } = newKeyPair('bench', store.now());
  pinKey(store.configDir, pub);
  return signerFor(privateKey, pub.keyId, pub.name);
}

function goalHistory(i: number): EventDraft[] {
  const drafts: EventDraft[] = [
    draft('goal.created', {
      title: `Goal ${i}`,
      objective: `Objective of goal ${i}`,
      quota: { budgets: { turns: 500, costUsd: 50 }, window: { kind: 'life' }, cooldownSeconds: 0 },
      handoff: [],
    }),
  ];
  for (let t = 0; t < 20; t++) {
    drafts.push(
      draft('todo.added', {
        todo: {
          id: `t${t}`,
          title: `Todo ${t} of goal ${i}`,
          owner: t === 19 ? 'user' : 'agent',
          priority: (['P0', 'P1', 'P2', 'P3'] as const)[t % 4]!,
          action: t % 3 === 0 ? undefined : `echo step-${t}`,
          gate: t === 18 ? 'release' : undefined,
          dependsOn: [],
        },
      }),
    );
  }
  drafts.push(
    draft('gate.requested', {
      gate: { id: 'release', title: 'Approve release', reason: 'ships to users', guards: ['t18'] },
    }),
  );
  for (let r = 0; r < 3; r++) {
    drafts.push(draft('run.started', { run: { id: `run-${r}`, agent: 'bench-agent' } }));
    drafts.push(draft('todo.claimed', { todoId: `t${r}`, by: 'bench-agent' }));
    drafts.push(
      draft('evidence.added', {
        evidence: {
          id: `ev-${r}`,
          runId: `run-${r}`,
          todoId: `t${r}`,
          kind: 'command',
          summary: 'exit 0 in 0.50 s\nok',
          command: `echo step-${r}`,
          exitCode: 0,
          durationMs: 500,
        },
      }),
    );
    drafts.push(draft('todo.completed', { todoId: `t${r}`, evidence: [`ev-${r}`] }));
    drafts.push(
      draft('run.ended', {
        runId: `run-${r}`,
        outcome: 'succeeded',
        spend: { tokens: 10000, costUsd: 0.1, wallSeconds: 30 },
      }),
    );
  }
  return drafts;
}

/**
 * 7 clones each add PER_CLONE events to `goal` in their own log, which is then copied into the
 * store, as a pull brings a teammate's log. A clone holds only this goal (and the store's files
 * outside goals/), so that making one stays cheap at 10,000 goals.
 */
function addClonesLogs(store: Store, goal: string) {
  const goalsDir = path.join(store.root, 'goals');
  for (let w = 1; w < WRITERS; w++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-clone-'));
    made.add(dir);
    fs.cpSync(store.root, path.join(dir, '.loopx'), {
      recursive: true,
      filter: (src) => {
        const rel = path.relative(store.root, src);
        if (rel.startsWith('local')) return false;
        return path.dirname(src) !== goalsDir || path.basename(src) === goal;
      },
    });
    const clone = new Store(dir);
    const writer: Actor = { kind: 'agent', id: `writer-${w}`, channel: 'cli' };
    for (let k = 0; k < PER_CLONE; k++)
      invoke(clone, 'todo.update', { goalId: goal, todoId: `t${4 + (k % 12)}`, note: `w${w} #${k}` }, writer);
    const id = clone.writerId();
    fs.copyFileSync(clone.logPath(goal), store.logPath(goal, id));
    fs.mkdirSync(writersDir(store.root), { recursive: true });
    fs.copyFileSync(
      path.join(writersDir(clone.root), `${id}.json`),
      path.join(writersDir(store.root), `${id}.json`),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const measuredGoal = (goals: number) => `goal-${String(Math.floor(goals / 2)).padStart(5, '0')}`;

export interface BenchStore {
  dir: string;
  store: Store;
  /** The goal the per-goal calls read: WRITERS writers' logs. */
  goal: string;
  generateMs: number;
}

export function makeStore(goals: number): BenchStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `loopx-bench-${goals}-`));
  made.add(dir);
  const store = Store.init(dir);
  const t = performance.now();
  for (let i = 0; i < goals; i++) {
    const id = `goal-${String(i).padStart(5, '0')}`;
    store.commit(id, () => goalHistory(i), { actor: person, create: true, deferIndex: true });
  }
  const goal = measuredGoal(goals);
  addClonesLogs(store, goal);
  const logs = store.logFiles(goal).length;
  if (logs !== WRITERS) throw new Error(`bench: goal ${goal} has ${logs} logs, not ${WRITERS}`);
  const generateMs = performance.now() - t;
  // The release gate approved (a person's signed decision), as in a goal under way.
  invoke(store, 'gate.approve', { goalId: goal, gateId: 'release' }, person, { signer: benchSigner(store) });
  // Listing trusts an index entry once its goal's logs folder is 2 s old (git's racy-index rule):
  // measure a store whose goals were written before that, as a team's mostly are.
  spawnSync('sleep', ['2.1']);
  store.rebuildIndex();
  return { dir, store, goal, generateMs };
}

let trueTodos = 0;

/**
 * The goal's snapshot brought up to date after the bench wrote to it in process, as the `loopx`
 * call that would have written it leaves it: a process's first commit writes the snapshot
 * (store/commit-derived.ts), while a process that writes on and on, like this one, keeps to one
 * snapshot every few events. So the next call measured starts, as an agent's next call does,
 * with no tail of the log to validate.
 */
function settle(b: BenchStore): void {
  b.store.rebuildSnapshot(b.goal);
}

/**
 * A contract of AGENT that lists `true` (a person's todo action, so no review gate): ends the
 * agent's open run, adds the todo, and opens a run with a fresh contract, in process.
 */
export function contractForTrue(b: BenchStore): { contract: ShouldRunOutput; todoId: string } {
  summaryAll(b.store, b.goal, agent, { agent: AGENT });
  const todoId = addTrueTodo(b);
  const contract = shouldRun(b.store, { goalId: b.goal, agent: AGENT }, agent);
  settle(b);
  return { contract, todoId };
}

/** Adds an agent todo whose action is `true`, first in priority; returns its id. */
export function addTrueTodo(b: BenchStore): string {
  const todoId = `true-${++trueTodos}`;
  invoke(
    b.store,
    'todo.add',
    { goalId: b.goal, todoId, title: 'Run true', action: 'true', priority: 'P0', owner: 'agent' },
    person,
  );
  settle(b);
  return todoId;
}

/** A `Bash` tool call of an allowed command (`ls`), as Claude Code sends PreToolUse. */
export const hookPayload = (cwd: string) =>
  JSON.stringify({
    session_id: 'bench-session',
    transcript_path: path.join(cwd, 'transcript.jsonl'),
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'ls', description: 'List files' },
  });
