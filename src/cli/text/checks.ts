/** The text of `loopx verify`, `loopx self-repair` and `loopx capabilities`. */
import type { CapabilityDeclaration, GoalCheck, PolicyStatus, RepairReport } from '../../core/index';
import { columns, plural } from './format';

export function repairText(r: RepairReport): string {
  const checked = `checked ${plural(r.checked_goals, 'goal')}`;
  if (r.findings.length === 0) return `${checked}: nothing to repair`;
  const out = [`${checked}${r.dry_run ? ' (dry run: nothing changed)' : ''}:`];
  out.push(
    ...columns(
      r.findings.map((f) => [
        f.fixed ? 'fixed' : 'found',
        `${f.kind}${f.goal_id ? ` ${f.goal_id}` : ''}: ${f.message}`,
      ]),
      { indent: '  ' },
    ),
  );
  return out.join('\n');
}

export function verifyText(
  goals: GoalCheck[],
  policy: PolicyStatus,
  workspace: { problem?: string },
): string {
  const rows: string[][] = policy.message ? [['policy', policy.message]] : [];
  if (workspace.problem) rows.unshift(['WORKSPACE', workspace.problem]);
  /** Lines under a goal's row (ignored and overruled decisions), by row index. */
  const under = new Map<number, string[]>();
  for (const g of goals) {
    const broken = g.writers.filter((w) => !w.ok);
    if (!g.ok) {
      rows.push([
        'BROKEN',
        `${g.goal_id}: ${g.error ?? broken.map((w) => `writer ${w.writer}: ${w.error}`).join('; ')}`,
      ]);
      continue;
    }
    const torn = g.writers.filter((w) => w.torn_tail_line !== undefined);
    rows.push([
      'ok',
      `${g.goal_id}: ${plural(g.events ?? 0, 'event')} from ${plural(g.writers.length, 'writer')}, state ${g.state_hash?.slice(0, 12)}` +
        torn.map((w) => ` (${w.writer}: incomplete line ${w.torn_tail_line}: run self-repair)`).join(''),
    ]);
    const notes = [...(g.ignored_decisions ?? []), ...(g.overruled ?? [])];
    if (notes.length) under.set(rows.length - 1, notes);
  }
  const lines = columns(rows);
  const width = Math.max(0, ...rows.map((r) => r[0]!.length)) + 2;
  return (
    lines.flatMap((l, i) => [l, ...(under.get(i) ?? []).map((n) => `${' '.repeat(width)}${n}`)]).join('\n') ||
    'no goals'
  );
}

export function capabilitiesText(caps: CapabilityDeclaration[]): string {
  return columns(caps.map((c) => [c.id, `${c.humanOnly ? '[human] ' : ''}${c.summary}`])).join('\n');
}
