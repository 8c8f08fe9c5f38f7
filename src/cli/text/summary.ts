/** The text of `loopx summary_all`: how the turn ended, then where the goal stands. */
import type { SummaryDoc } from '../../core/index';
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
