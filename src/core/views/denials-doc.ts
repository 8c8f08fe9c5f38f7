/**
 * The tool calls hooks refused an agent (model/goal-state.ts Denial, recorded by `agent.deny`), as a person
 * is shown them: the latest first, what was tried on one line, and when they need a look. Status
 * documents (and so the dashboard and the CLI) and the tree read them through here.
 */
import type { Denial, DenyCode, GoalState } from '../model';
import { oneLine } from '../model';
import type { AttentionItem } from './status-doc';

/** How many refusals, the newest, a goal's status and its tree list (the state keeps more). */
export const DENIALS_SHOWN = 20;
/** Refusals count towards attention for this long... */
export const DENIAL_WINDOW_MS = 60 * 60_000;
/** ...from this many of one agent on: one refusal is a slip, three in an hour a stuck or probing agent. */
export const DENIAL_REPEATS = 3;
/**
 * Codes worth a person's look at the first time: an agent trying to decide for a person or to edit
 * LoopX's state or its config folder is never a slip of a command line.
 */
export const TRUST_DENY_CODES: readonly DenyCode[] = [
  'human_only',
  'loopx_state',
  'config_folder',
  'hook_file',
];

const TRIED: Partial<Record<DenyCode, string>> = {
  human_only: 'tried to make a person’s decision',
  loopx_state: 'tried to change LoopX’s state directly',
  config_folder: 'tried to reach the LoopX config folder',
  hook_file: 'tried to change the LoopX hook',
};

/** The latest refusals, newest first, at most `max`. */
export function latestDenials(goal: GoalState, max = DENIALS_SHOWN): Denial[] {
  return (goal.denied ?? []).slice(-max).reverse();
}

/** What was tried, on one line (model/text-rules.ts oneLine): the command, else the path, else the tool. */
export function denialSubject(d: { tool: string; command?: string; path?: string }, max = 80): string {
  return oneLine(d.command ?? d.path ?? '', max) || oneLine(d.tool, max);
}

/** The refusals within the attention window; a clone whose clock runs ahead counts as recent. */
function recentDenials(goal: GoalState, now: Date): Denial[] {
  const since = now.getTime() - DENIAL_WINDOW_MS;
  return (goal.denied ?? []).filter((d) => Date.parse(d.at) > since);
}

/** Whether a refusal is still within the window: the attention then changes as time passes. */
export function deniedRecently(goal: GoalState, now: Date): boolean {
  return recentDenials(goal, now).length > 0;
}

/**
 * The agents a person should look at, one item each, the most recently refused first: refused
 * DENIAL_REPEATS times or more within the last hour, or once with a trust code. The hour applies to
 * both: an item no one can dismiss must not stay for good, and every refusal kept is still listed
 * (status, the tree, the dashboard's details).
 */
export function denialAttention(goal: GoalState, now: Date): AttentionItem[] {
  const byAgent = new Map<string, Denial[]>();
  for (const d of recentDenials(goal, now)) {
    const list = byAgent.get(d.agent) ?? [];
    list.push(d);
    byAgent.set(d.agent, list);
  }
  const found: { last: number; item: AttentionItem }[] = [];
  const all = goal.denied ?? [];
  for (const [agent, tries] of byAgent) {
    const trust = tries.filter((d) => TRUST_DENY_CODES.includes(d.code)).at(-1);
    if (!trust && tries.length < DENIAL_REPEATS) continue;
    const latest = tries.at(-1)!;
    const n = tries.length;
    found.push({
      last: all.lastIndexOf(latest),
      item: {
        kind: 'denied',
        goal_id: goal.id,
        id: agent,
        title: trust ? `${agent} ${TRIED[trust.code]}` : `${agent} was refused ${n} times`,
        detail: `${n} refusal${n > 1 ? 's' : ''} in the last hour; the latest${latest.enforced ? '' : ' (observe mode: let through)'}: ${denialSubject(latest)}`,
      },
    });
  }
  return found.sort((a, b) => b.last - a.last).map((f) => f.item);
}
