/** The text of one goal (`loopx status --goal-id`, `goal show`, `todo list`, `gate list`). */
import type { DeniedOut, GoalStatusDoc } from '../../core/index';
import { denialSubject, oneLine } from '../../core/index';
import { atMinute, columns, plural, quotaLine, usageLine } from './format';

const MARK: Record<string, string> = { open: '[ ]', claimed: '[~]', done: '[x]', cancelled: '[-]' };

/** How many refusals, the newest, a goal's text shows (the JSON has more). */
const REFUSED_SHOWN = 5;
/** How many runs, the newest, a goal's text shows. */
const RUNS_SHOWN = 5;

/** `kind:id` (as the JSON has it) as words: `agent codex`, `user alice`. */
const who = (kindId: string) => kindId.replace(':', ' ');

/** The todos, one aligned line each: mark, priority, id, title, then its command and notes. */
export function todoLines(todos: GoalStatusDoc['todos']): string[] {
  return columns(
    todos.map((t) => {
      const notes = [
        t.owner === 'user' ? 'for a person' : '',
        t.gate ? `gate ${t.gate}` : '',
        t.claimed_by && t.status === 'claimed' ? `claimed by ${t.claimed_by}` : '',
        t.depends_on.length ? `after ${t.depends_on.join(', ')}` : '',
        t.recurs ? `${t.recurs}${t.next_due ? `, next due ${t.next_due}` : ''}` : '',
      ].filter(Boolean);
      const tail = [
        t.action ? `$ ${oneLine(t.action, 120)}` : '',
        notes.length ? `(${notes.join(', ')})` : '',
      ];
      return [MARK[t.status] ?? '[?]', t.priority, t.id, t.title, tail.filter(Boolean).join('  ')];
    }),
    { indent: '  ' },
  );
}

/** The gates, one aligned line each: status, id, title, who decided (or asked). */
export function gateLines(gates: GoalStatusDoc['gates'], withReason = false): string[] {
  return columns(
    gates.map((g) => [
      g.status,
      g.id,
      g.title,
      g.decided_by
        ? `${g.status} by ${who(g.decided_by)}${g.signed ? ' (signed)' : ''}`
        : `asked by ${who(g.requested_by)} via ${g.requested_via}`,
      withReason && g.reason ? `why: ${oneLine(g.reason, 200)}` : '',
    ]),
    { indent: '  ' },
  );
}

/** `loopx gate list`: every gate of the goal, with who asked and why. */
export function gateListText(gates: GoalStatusDoc['gates']): string {
  return gates.length
    ? gateLines(gates, true)
        .map((l) => l.slice(2))
        .join('\n')
    : 'no gates';
}

export function goalText(d: GoalStatusDoc): string {
  const out = [
    `${d.title}  (${d.id})`,
    `status ${d.status}, ${d.progress.done} of ${plural(d.progress.total, 'todo')} done; quota: ${quotaLine(d.quota.budgets)}`,
  ];
  if (d.objective) out.push(`objective: ${d.objective.split('\n')[0]}`);
  if (d.attention.length) {
    out.push('', 'needs attention:');
    out.push(
      ...columns(
        d.attention.map((a) => [a.kind, a.id, a.title === a.detail ? a.detail : `${a.title}: ${a.detail}`]),
        { indent: '  ! ' },
      ),
    );
  }
  if (d.todos.length) out.push('', 'todos:', ...todoLines(d.todos));
  if (d.gates.length) out.push('', 'gates:', ...gateLines(d.gates));
  if (d.runs.length) {
    out.push('', d.runs.length > RUNS_SHOWN ? `recent runs (the latest ${RUNS_SHOWN}):` : 'runs:');
    const runs = d.runs.slice(0, RUNS_SHOWN);
    const lines = columns(
      runs.map((r) => [
        r.id,
        r.agent,
        r.outcome ?? 'open',
        plural(r.evidence.length, 'evidence', 'evidence'),
        r.rewards.map((w) => `reward ${w.score}`).join(', '),
      ]),
      { indent: '  ' },
    );
    runs.forEach((r, i) => {
      out.push(lines[i]!);
      if (r.usage) out.push(`      ${usageLine(r.usage)}`);
    });
  }
  if (d.denied.length) out.push('', ...refusedLines(d.denied, d.denied_total));
  for (const w of d.warnings) out.push(`warning: ${w}`);
  return out.join('\n');
}

/**
 * The latest refusals, newest first: when, which agent, what it tried and why, one refusal in two
 * lines. Observe mode let a call through: it says "would refuse".
 */
function refusedLines(denied: DeniedOut[], total: number): string[] {
  const shown = denied.slice(0, REFUSED_SHOWN);
  const width = Math.max(...shown.map((x) => x.agent.length));
  const out = [`refused (${total} in all${total > shown.length ? `, the latest ${shown.length}` : ''}):`];
  for (const x of shown) {
    const what =
      x.command !== undefined
        ? `$ ${denialSubject(x, 120)}`
        : `${x.tool}${x.path !== undefined ? ` ${denialSubject(x, 120)}` : ''}`;
    const verb = x.enforced ? 'refused' : 'would refuse (observe mode)';
    out.push(`  ${atMinute(x.at)}  ${x.agent.padEnd(width)}  ${verb}: ${what}`);
    out.push(`      why (${x.code}): ${oneLine(x.reason, 200)}`);
  }
  return out;
}
