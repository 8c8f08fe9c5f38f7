/** The text of `loopx summary_all` (how the turn ended, then where the goal stands) and of `loopx turn`. */
import type { SummaryDoc, TurnDoc } from '../../core/index';
import { oneLine } from '../../core/index';
import { columns, plural, quotaLine } from './format';

export function summaryText(d: SummaryDoc): string {
  const out = [
    `goal ${d.goal_id}: ${d.status}, ${d.progress.done} of ${plural(d.progress.total, 'todo')} done`,
  ];
  for (const r of d.ended_runs) {
    out.push(`ended run ${r.id}: ${r.outcome}${r.evidence.length ? '' : ', no evidence'}`);
    out.push(
      ...columns(
        r.evidence.map((e) => [
          e.todo_id ?? '-',
          e.exit_code !== undefined ? `exit ${e.exit_code}` : '',
          oneLine(e.summary, 160),
        ]),
        { indent: '  ' },
      ),
    );
  }
  if (d.ended_runs.length === 0) out.push('no open run to end');
  const gates = Object.entries(d.gates)
    .filter(([, n]) => n)
    .map(([k, n]) => `${n} ${k}`);
  out.push(`gates: ${gates.join(', ') || 'none'}`);
  out.push(`quota: ${quotaLine(d.quota)}`);
  if (d.rewards.count) out.push(`rewards: ${d.rewards.count}, mean ${d.rewards.mean}`);
  if (d.attention.length) {
    out.push(
      'needs attention:',
      ...columns(
        d.attention.map((a) => [a.kind, a.id, a.detail]),
        { indent: '  ! ' },
      ),
    );
  }
  return out.join('\n');
}

/** `loopx turn`: what ran, what did not, then the summary of the run (or why none was opened). */
export function turnText(d: TurnDoc): string {
  if (!d.summary)
    return [`goal ${d.goal_id}: ${d.decision}, nothing run`, ...d.reasons.map((r) => `  ${r}`)].join('\n');
  const out = [`turn under contract ${d.contract_id}: ran ${plural(d.ran.length, 'command')}`];
  out.push(
    ...columns(
      d.ran.map((s) => [
        s.todo_id,
        `exit ${s.exit_code}`,
        `${(s.duration_ms / 1000).toFixed(2)} s`,
        oneLine(s.command, 120),
      ]),
      { indent: '  ' },
    ),
  );
  if (d.not_run.length) out.push(`not run: ${d.not_run.map((n) => n.todo_id).join(', ')}`);
  return `${out.join('\n')}\n${summaryText(d.summary)}`;
}
