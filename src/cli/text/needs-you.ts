/**
 * The text of `loopx status --all`, `loopx gate list --all` and `loopx workspaces`: one queue of
 * what needs the person across every workspace on the machine, gates first with every command
 * they let run, whole, and the command that decides.
 */
import type { NeedsYouDoc, NeedsYouItem, QueueWorkspace } from '../../core/index';
import { atMinute, columns, plural } from './format';

function itemLines(i: NeedsYouItem): string[] {
  const head = `${i.workspace.name} · ${i.goal_id}`;
  if (i.kind === 'gate') {
    return [
      `  ! ${head} · gate ${i.id}: ${i.title}`,
      ...(i.requested_by
        ? [`      asked by ${i.requested_by}${i.requested_at ? ` at ${atMinute(i.requested_at)}` : ''}`]
        : []),
      ...(i.commands?.length
        ? i.commands.map((c) => `      $ ${c}`)
        : ['      (it lets no listed command run: an agent does the work and reports)']),
      ...(i.cli ? [`      decide: ${i.cli}`] : []),
    ];
  }
  return [`  ! ${head} · ${i.title}: ${i.detail}`];
}

/** `what`: "needs you" for the whole queue, "pending gates" for gates only. */
export function needsYouText(d: NeedsYouDoc, what: 'needs you' | 'pending gates'): string {
  const out: string[] = [];
  if (d.workspaces.length === 0) {
    return 'No workspaces listed yet: a workspace is listed when LoopX first writes in it (loopx init).';
  }
  const where = `across ${plural(d.workspaces.length, 'workspace')}`;
  out.push(
    d.items.length === 0
      ? `Nothing ${what === 'needs you' ? 'needs you' : 'is pending'} ${where}.`
      : `${what === 'needs you' ? 'Needs you' : 'Pending gates'} ${where}: ${plural(d.items.length, 'item')}`,
  );
  for (const i of d.items) out.push(...itemLines(i));
  const quiet = d.workspaces.filter((w) => w.items === 0 && !w.problem).map((w) => w.name);
  if (d.items.length && quiet.length) out.push('', `Nothing in: ${quiet.join(', ')}`);
  for (const w of d.workspaces.filter((x) => x.problem))
    out.push(`could not read ${w.name} (${w.path}): ${w.problem}`);
  for (const p of d.pruned) out.push(`no longer listed (its .loopx/ is gone): ${p}`);
  return out.join('\n');
}

/** `loopx workspaces`: one aligned line per listed workspace. */
export function workspacesText(list: QueueWorkspace[], pruned: string[]): string {
  if (list.length === 0)
    return 'No workspaces listed yet: a workspace is listed when LoopX first writes in it (loopx init).';
  return [
    ...columns(
      list.map((w) => [
        w.name,
        w.problem
          ? 'unreadable'
          : w.items
            ? `${w.items} ${w.items === 1 ? 'needs' : 'need'} you`
            : 'nothing needs you',
        w.path,
      ]),
      {},
    ),
    ...pruned.map((p) => `no longer listed (its .loopx/ is gone): ${p}`),
  ].join('\n');
}
