/** The text of `loopx status`: every goal on one aligned line, then what needs a person. */
import type { StatusDoc } from '../../core/index';
import { columns, plural } from './format';

/** How many attention items `loopx status` lists (the JSON has them all). */
const ATTENTION_SHOWN = 20;

export function statusText(d: StatusDoc): string {
  const policy = d.policy.message ? [`policy: ${d.policy.message}`] : [];
  if (d.goals.length === 0 && d.errors.length === 0) {
    return [
      'No goals yet. Create one: loopx project_prompt create --title "..." --description "..."',
      ...policy,
    ].join('\n');
  }
  const out: string[] = [...policy];
  out.push(
    ...columns(
      [
        ...d.goals.map((g) => [g.status, `${g.progress.done}/${g.progress.total}`, g.id, g.title, notes(g)]),
        ...d.errors.map((e) => ['error', '', e.goal_id, e.message]),
      ],
      { align: ['left', 'right'] },
    ),
  );
  if (d.attention.length) {
    const shown = d.attention.slice(0, ATTENTION_SHOWN);
    out.push(
      '',
      d.attention.length > shown.length
        ? `needs attention (the first ${shown.length} of ${d.attention.length}):`
        : 'needs attention:',
      ...columns(
        shown.map((a) => [a.goal_id, a.detail]),
        { indent: '  ! ' },
      ),
    );
  }
  return out.join('\n');
}

/** `(1 gate pending, 4 refused)` after a goal's line, or nothing. */
function notes(g: StatusDoc['goals'][number]): string {
  const n = [
    g.pending_gates ? `${plural(g.pending_gates, 'gate')} pending` : '',
    g.denied ? `${g.denied} refused` : '',
  ].filter(Boolean);
  return n.length ? `(${n.join(', ')})` : '';
}
