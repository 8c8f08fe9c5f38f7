/**
 * A decision whose signature comes later: a browser's passkey signs asynchronously, over a
 * statement that names the event's id, time, clock stamp, writer, actor, type and data. So the
 * event is fixed first (`prepareEvent`: planned against the goal as it is, nothing written), the
 * person signs its statement, and then exactly that event is written (`CommitOptions.exact`,
 * store/commit.ts) under the goal's lock, only if the goal's head is still the one it was
 * prepared on and the plan still makes the same event; otherwise it is refused as
 * `decision_stale` and the person looks again.
 */
import * as fs from 'node:fs';
import type { Actor, DecisionSig, EventDraft, GoalState, LoopxEvent } from '../model';
import {
  conflict,
  EVENT_VERSION,
  maxHlc,
  newId,
  nextHlc,
  refused,
  safeParseEvent,
  usageError,
} from '../model';
import type { DecisionFacts } from '../trust';
import { isDecision } from '../trust';
import type { LoadedGoal } from './goal-load';
import { LEGACY_LOG } from './goal-logs';
import { canonicalJson, describeIssues, sha256 } from './json-file';
import type { Store } from './store';

/** What `CommitOptions.exact` carries: the prepared event, to be written as it is, and its signature. */
export interface ExactEvent {
  /** The goal's head it was prepared on (`goalHead`). */
  head: string;
  /** The plan's draft then: the plan must make the same one now. */
  draft: EventDraft;
  id: string;
  ts: string;
  hlc: string;
  sig: DecisionSig;
}

/** A decision fixed before it is signed: its facts (what the statement covers) and where it goes. */
export interface PreparedEvent {
  goalId: string;
  head: string;
  draft: EventDraft;
  facts: DecisionFacts & { hlc: string };
  /** The workspace identity its statement names. */
  workspace: string;
}

/**
 * The goal's head: every log's end and what waits to count. Any event written since (by any
 * writer), or one stamped ahead that now counts, changes it.
 */
export function goalHead(loaded: LoadedGoal | undefined): string {
  if (!loaded) return '';
  const heads = Object.keys(loaded.heads)
    .sort()
    .map((w) => [w, loaded.heads[w]!.seq, loaded.heads[w]!.lastHash]);
  return sha256(canonicalJson({ revision: loaded.revision, heads, held: loaded.heldUntil ?? null }));
}

/** The refusal of a prepared decision whose goal changed before it was signed. */
export function staleDecision(goalId: string, why: string) {
  return conflict(`the goal changed while you decided (${why}): look again, then decide`, {
    goalId,
    reason: 'decision_stale',
  });
}

/** Whether this writer's log ends in a torn line (a crashed write the next commit quarantines). */
function endsTorn(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const last = Buffer.alloc(1);
    return size > 0 && fs.readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 10;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Plans a person's decision against goal `goalId` as it is now and fixes the event it makes,
 * writing nothing. `plan` must make exactly one event, a decision (a person's signature gives it
 * its effect).
 */
export function prepareEvent(
  store: Store,
  goalId: string,
  plan: (state: GoalState | undefined, revision: number) => EventDraft[],
  actor: Actor,
): PreparedEvent {
  const workspace = store.trust().workspace;
  if (!workspace)
    throw refused('a decision cannot be signed: this workspace has no identity yet (run `loopx init`)', {
      reason: 'no_workspace_identity',
    });
  const writer = store.writerId();
  let loaded = store.load(goalId);
  // A torn tail or an older LoopX's log is tidied by an ordinary commit (which writes only the
  // record of it), so that the decision, when signed, is the only event its commit appends.
  if (loaded.heads[LEGACY_LOG] || endsTorn(store.logPath(goalId))) {
    store.commit(goalId, () => [], { actor });
    loaded = store.load(goalId);
  }
  const drafts = plan(loaded.state, loaded.revision);
  const d = drafts[0];
  if (drafts.length !== 1 || !d || !isDecision(loaded.state, d))
    throw usageError(
      `only a single decision can be signed in a browser, not ${drafts.map((x) => x.type).join(', ')}`,
      {
        goalId,
      },
    );
  const own = loaded.heads[writer];
  const now = new Date(store.now());
  const candidate = {
    v: EVENT_VERSION,
    hlc: nextHlc(maxHlc(loaded.hlc, own?.key), now),
    seq: (own?.seq ?? 0) + 1,
    id: newId('ev', 10),
    ts: now.toISOString(),
    writer,
    actor,
    prev: own?.lastHash ?? null,
    type: d.type,
    data: d.data,
  };
  // Parsed as chainEvents parses it, so the statement signed is the one checked when written.
  const checked = safeParseEvent(candidate);
  if (!checked.success)
    throw usageError(`refused to prepare an invalid ${d.type} event: ${describeIssues(checked.error)}`, {
      goalId,
    });
  const ev = checked.data as LoopxEvent;
  return {
    goalId,
    head: goalHead(loaded),
    draft: d,
    workspace,
    facts: {
      goalId,
      id: ev.id,
      ts: ev.ts,
      hlc: candidate.hlc,
      writer,
      actor: ev.actor,
      type: ev.type,
      data: ev.data,
    },
  };
}

/** `CommitOptions.exact` for a prepared decision and the signature the person made over its statement. */
export function exactEvent(p: PreparedEvent, sig: DecisionSig): ExactEvent {
  return { head: p.head, draft: p.draft, id: p.facts.id, ts: p.facts.ts, hlc: p.facts.hlc, sig };
}

/** Under the goal's lock: refused unless the goal is at the prepared head and the plan makes the same event. */
export function checkExact(
  goalId: string,
  exact: ExactEvent,
  loaded: LoadedGoal | undefined,
  drafts: EventDraft[],
): void {
  if (goalHead(loaded) !== exact.head) throw staleDecision(goalId, 'new events were written to it');
  if (drafts.length !== 1 || canonicalJson(drafts) !== canonicalJson([exact.draft]))
    throw staleDecision(goalId, 'the decision it would make now is not the one signed');
}
