/**
 * One "needs you" queue across every workspace listed in the config folder
 * (store/workspace-registry.ts): pending gates with who asked and every command they let run,
 * todos for a person, spent budgets, refusals, goals without a plan, and lanes of `loopx drive`
 * that only a person can move on. The same items a workspace's own status shows (views/status.ts
 * attentionFor), so the two never disagree.
 */
import type { GoalState } from '../model';
import { compareText } from '../model';
import { openWorkGuardedBy, quotaUse } from '../rules';
import { shellQuote } from '../shell';
import type { RegisteredWorkspace } from '../store';
import { listWorkspaces, Store, workspaceId } from '../store';
import { driveStatus } from '../drive';
import type { NeedsYouDoc, NeedsYouItem, QueueWorkspace } from '../views';
import { attentionFor, describeActor, NEEDS_YOU_SCHEMA } from '../views';

export interface NeedsYouOptions {
  configDir: string;
  now?: Date;
  /** Only these kinds (`gate` for `gate list --all`). */
  kinds?: readonly NeedsYouItem['kind'][];
  /** Opens a listed workspace's store (tests, and callers that already hold one). */
  open?: (w: RegisteredWorkspace) => Store;
}

const ORDER: Record<NeedsYouItem['kind'], number> = {
  gate: 0,
  lane: 1,
  quota: 2,
  'user-todo': 3,
  denied: 4,
  plan: 5,
};

/** The queue across every listed workspace, gates first, then oldest first. */
export function needsYou(opts: NeedsYouOptions): NeedsYouDoc {
  const now = opts.now ?? new Date();
  const list = listWorkspaces(opts.configDir);
  const workspaces: QueueWorkspace[] = [];
  const items: NeedsYouItem[] = [];
  const open = opts.open ?? ((w: RegisteredWorkspace) => Store.open(w.path, { configDir: opts.configDir }));
  for (const w of list.workspaces) {
    const entry: QueueWorkspace = {
      path: w.path,
      name: w.name,
      key: workspaceId(w.path),
      ...(w.identity ? { identity: w.identity } : {}),
      items: 0,
    };
    try {
      const got = workspaceItems(open(w), { ...w, key: entry.key }, now, opts.kinds);
      entry.items = got.items.length;
      if (got.problem) entry.problem = got.problem;
      items.push(...got.items);
    } catch (e) {
      entry.problem = (e as Error).message;
    }
    workspaces.push(entry);
  }
  items.sort(
    (a, b) =>
      ORDER[a.kind] - ORDER[b.kind] ||
      compareText(a.requested_at ?? '', b.requested_at ?? '') ||
      compareText(a.workspace.name, b.workspace.name) ||
      compareText(a.goal_id, b.goal_id) ||
      compareText(a.id, b.id),
  );
  return {
    schema: NEEDS_YOU_SCHEMA,
    generated_at: now.toISOString(),
    workspaces,
    items,
    pruned: list.pruned,
  };
}

/**
 * What needs the person in one workspace (only `kinds`, when given), and why some of it could not
 * be read (a damaged goal). Asked for gates only, a goal the index counts no pending gate in is
 * never loaded, and the lanes are not read.
 */
export function workspaceItems(
  store: Store,
  w: Pick<RegisteredWorkspace, 'path' | 'name'> & { key?: string },
  now: Date,
  kinds?: readonly NeedsYouItem['kind'][],
): { items: NeedsYouItem[]; problem?: string } {
  const wants = (k: NeedsYouItem['kind']) => !kinds || kinds.includes(k);
  const gatesOnly = !!kinds && kinds.every((k) => k === 'gate');
  const where = { path: w.path, name: w.name, key: w.key ?? workspaceId(w.path) };
  const ws = `--workspace ${shellQuote(w.path)}`;
  const items: NeedsYouItem[] = [];
  const { goals, errors } = store.listGoals();
  const problems = errors.map((e) => `goal ${e.goalId}: ${e.message}`);
  const policy = store.policy();
  for (const g of goals) {
    if (g.status === 'closed' || g.status === 'cancelled') continue;
    if (gatesOnly && g.pendingGates === 0) continue;
    let state: GoalState;
    try {
      state = store.load(g.id).state;
    } catch (e) {
      problems.push(`goal ${g.id}: ${(e as Error).message}`);
      continue;
    }
    for (const a of attentionFor(state, quotaUse(state, now), now)) {
      if (!wants(a.kind)) continue;
      const item: NeedsYouItem = {
        workspace: where,
        kind: a.kind,
        goal_id: state.id,
        goal_title: state.title,
        id: a.id,
        title: a.title,
        detail: a.detail,
      };
      if (a.kind === 'gate') Object.assign(item, gateDetails(state, policy, a.id, ws));
      items.push(item);
    }
  }
  for (const lane of wants('lane') ? driveStatus(store).lanes : []) {
    if (!lane.needs_person) continue;
    items.push({
      workspace: where,
      kind: 'lane',
      goal_id: lane.goal_id,
      goal_title: lane.goal_title ?? lane.goal_id,
      id: lane.name,
      title: `lane ${lane.name} needs you`,
      detail: lane.why ?? lane.status,
      cli: `loopx ${ws} drive status`,
    });
  }
  return { items, ...(problems.length ? { problem: problems.join('; ') } : {}) };
}

function gateDetails(
  state: GoalState,
  policy: ReturnType<Store['policy']>,
  gateId: string,
  ws: string,
): Partial<NeedsYouItem> {
  const gate = state.gates.find((x) => x.id === gateId);
  if (!gate) return {};
  const work = openWorkGuardedBy(gate.id, state.todos, policy, state.gates);
  return {
    requested_by: describeActor(gate.requestedBy),
    requested_at: gate.requestedAt,
    commands: work.flatMap((t) => (t.action === undefined ? [] : [t.action])),
    cli: `loopx ${ws} gate approve --goal-id ${state.id} --gate-id ${gate.id}`,
  };
}
