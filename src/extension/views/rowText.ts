/**
 * What each row of the Goals tree says, without the editor API (so it is tested as plain data):
 * the label says the important thing and fits the side bar at its default width, the description
 * is a word or two, and the detail (ids, commands whole, who and when) is in the tooltip. Times
 * read as everywhere else (core/views/when-text.ts). Records (evidence, runs, refusals, the
 * policy) are in recordRowText.ts.
 */
import type { Gate, GoalState, IndexEntry, Todo } from '../../core/index';
import {
  budgetAmount,
  budgetLabel,
  BUDGET_NAMES,
  describeActor,
  exhaustedBudget,
  oneLine,
  plural,
  quotaUse,
  reasonWhose,
  whenText,
} from '../../core/index';

/**
 * One block of a tooltip: a paragraph of plain text (after `bold`, shown in bold), or a code block.
 * Store text goes in only as these, never as Markdown (markdown.ts renders them as data).
 */
export type TipBlock = { bold?: string; text?: string } | { code: string; language?: string };

export interface RowText {
  label: string;
  description: string;
  tooltip: TipBlock[];
}

export type GroupName = 'todos' | 'gates' | 'evidence' | 'runs' | 'denied';

const GROUP_LABEL: Record<GroupName, string> = {
  todos: 'Todos',
  gates: 'Gates',
  evidence: 'Evidence',
  runs: 'Runs',
  denied: 'Refused',
};

const capital = (s: string) => (s ? `${s[0]!.toUpperCase()}${s.slice(1)}` : s);

/** `19 turns left`, `$4.79 left`: the first budget the goal sets, or '' when it sets none. */
export function quotaLeftText(g: GoalState, now: number): string {
  const use = quotaUse(g, new Date(now));
  const k = BUDGET_NAMES.find((b) => use[b] !== undefined);
  if (!k) return '';
  const left = use[k]!.left;
  return k === 'costUsd'
    ? `${budgetAmount(k, left)} left`
    : `${budgetAmount(k, left)} ${budgetLabel(k)} left`;
}

/**
 * The one thing to know about a goal besides its title, most pressing first: a status other than
 * active, gates waiting for a person, a budget used up, no todos yet, else how far it got. A few
 * words: at the side bar's default width a title of 25 characters leaves room for about 10.
 */
function goalSummary(e: IndexEntry, g: GoalState | Error, now: number): string {
  if (e.status !== 'active') return e.status;
  if (e.pendingGates) return `${e.pendingGates} to approve`;
  if (!(g instanceof Error) && exhaustedBudget(quotaUse(g, new Date(now)))) return 'quota used up';
  if (!e.todosTotal) return 'no todos yet';
  return `${e.todosDone} of ${e.todosTotal} done`;
}

export function goalRow(e: IndexEntry, g: GoalState | Error, now: number): RowText {
  const facts = [
    capital(e.status),
    e.todosTotal ? `${e.todosDone} of ${plural(e.todosTotal, 'todo')} done` : 'no todos yet',
    e.pendingGates ? `${plural(e.pendingGates, 'gate')} to approve` : '',
    g instanceof Error ? '' : quotaLeftText(g, now),
  ].filter(Boolean);
  return {
    label: e.title,
    description: goalSummary(e, g, now),
    tooltip: [
      { bold: e.title, text: `· ${e.id}` },
      { text: g instanceof Error ? g.message : g.objective },
      { text: facts.join(' · ') },
      { text: `Created ${whenText(e.createdAt, now)}` },
    ],
  };
}

/** A group under a goal: its name, and its count or what in it waits for someone. */
export function groupRow(group: GroupName, count: number, g: GoalState | Error): RowText {
  const row = (description: string): RowText => ({ label: GROUP_LABEL[group], description, tooltip: [] });
  if (g instanceof Error || count === 0) return row(count ? String(count) : 'none');
  switch (group) {
    case 'todos': {
      const counted = g.todos.filter((t) => t.status !== 'cancelled');
      return row(`${counted.filter((t) => t.status === 'done').length} of ${counted.length} done`);
    }
    case 'gates': {
      const pending = g.gates.filter((x) => x.status === 'pending').length;
      return row(pending ? `${pending} to approve` : String(count));
    }
    case 'runs': {
      const open = g.runs.filter((r) => !r.endedAt).length;
      return row(open ? `${open} running` : String(count));
    }
    case 'denied': {
      // The tree lists the latest; the goal's log (Show Event Log) has every one.
      const total = g.deniedTotal ?? 0;
      return row(total > count ? `${total} · the latest ${count}` : String(count));
    }
    default:
      return row(String(count));
  }
}

/**
 * Where a todo stands, in a word or two: what a person scans the list for (its priority, owner
 * and gate are in the tooltip).
 */
function todoState(t: Todo, g: GoalState): string {
  if (t.status === 'done' || t.status === 'cancelled') return t.status;
  if (t.status === 'claimed') return 'in progress';
  const gate = t.gate ? g.gates.find((x) => x.id === t.gate) : undefined;
  if (gate?.status === 'pending') return 'gated';
  if (gate?.status === 'rejected') return 'gate rejected';
  return t.owner === 'user' ? 'for you' : 'open';
}

export function todoRow(t: Todo, g: GoalState, now: number): RowText {
  const gate = t.gate ? g.gates.find((x) => x.id === t.gate) : undefined;
  const tooltip: TipBlock[] = [{ text: `${t.id} · ${t.title}` }];
  tooltip.push(
    t.action !== undefined ? { code: t.action, language: 'sh' } : { text: '(judgment todo: no command)' },
  );
  const facts = [
    t.priority,
    t.owner === 'user' ? 'for you' : 'for an agent',
    t.status === 'claimed'
      ? `claimed by ${t.claimedBy ?? 'someone'}${t.claimedAt ? ` at ${whenText(t.claimedAt, now)}` : ''}`
      : t.status,
  ];
  tooltip.push({ text: facts.join(' · ') });
  if (t.gate) tooltip.push({ text: `Needs gate ${t.gate}${gate ? ` (${gate.status})` : ''}` });
  if (t.dependsOn.length) tooltip.push({ text: `After ${t.dependsOn.join(', ')}` });
  if (t.note) tooltip.push({ text: t.note });
  return { label: t.title, description: todoState(t, g), tooltip };
}

/**
 * What a gate is called in the Gates group: the title LoopX made up (`Gate staging (guards: …)`,
 * people-text.ts gateTitle) only repeats the group and the work, so that one shows as its id.
 */
export function gateName(gate: Pick<Gate, 'id' | 'title'>): string {
  const made = `Gate ${gate.id}`;
  return gate.title === made || gate.title.startsWith(`${made} (guards: `) ? gate.id : gate.title;
}

export function gateRow(gate: Gate, g: GoalState, now: number): RowText {
  const guarded = gate.guards.map((id) => g.todos.find((t) => t.id === id)?.title ?? id);
  const tooltip: TipBlock[] = [
    { bold: `Gate ${gate.id}`, text: gate.status },
    { text: guarded.length ? `Guards: ${guarded.join('; ')}` : 'Guards no todo yet' },
    { text: `Requested by ${describeActor(gate.requestedBy)} at ${whenText(gate.requestedAt, now)}` },
  ];
  // Bounded: the decision modal and `Show Reason` show a long reason whole, as a quote.
  if (gate.reason)
    tooltip.push({
      text: `${gate.reasonByLoopx ? 'Reason (LoopX)' : `Reason, in ${reasonWhose(gate)}`}: ${oneLine(gate.reason, 400)}`,
    });
  if (gate.status === 'pending' && gate.expiresAt)
    tooltip.push({ text: `Expires ${whenText(gate.expiresAt, now)}` });
  if (gate.decidedBy) {
    const at = gate.decidedAt ? ` at ${whenText(gate.decidedAt, now)}` : '';
    tooltip.push({
      text: `${capital(gate.status)} by ${describeActor(gate.decidedBy)}${at}${gate.signature ? ' (signed)' : ''}${gate.note ? `: ${gate.note}` : ''}`,
    });
  }
  return {
    label: gateName(gate),
    description: gate.status,
    tooltip,
  };
}
