/** `loopx drive status` and `loopx lane list` for a person at a terminal. */
import type { DriveStatus, LaneSpec } from '../../core/index';
import { laneGlance } from '../../core/index';

export function laneListText(lanes: readonly LaneSpec[]): string {
  if (lanes.length === 0) return 'no lanes set up here: loopx lane add <name> --goal-id G --runtime R';
  return lanes
    .map(
      (l) =>
        `${l.name}  runtime ${l.runtime} on goal ${l.goalId}${l.todosPerTurn ? `, ${l.todosPerTurn} todos a turn` : ''}`,
    )
    .join('\n');
}

export function driveStatusText(doc: DriveStatus): string {
  const head = doc.driver.running
    ? `loopx drive runs (process ${doc.driver.pid ?? '?'}, since ${doc.driver.since ?? '?'}): ${doc.working} of ${doc.lanes.length} lanes working`
    : `loopx drive is not running: ${doc.lanes.length} lane${doc.lanes.length === 1 ? '' : 's'} set up`;
  const lines = [head];
  for (const l of doc.lanes) {
    lines.push(
      '',
      `${l.name}: ${laneGlance(l, doc.driver.running, Date.now()).words}${l.why ? ` (${l.why})` : ''}`,
    );
    lines.push(`  goal ${l.goal_id}${l.goal_title ? ` "${l.goal_title}"` : ''}, runtime ${l.runtime}`);
    if (l.worktree) lines.push(`  worktree ${l.worktree.path} on branch ${l.worktree.branch}`);
    if (l.turn)
      lines.push(`  turn: run ${l.turn.run_id} since ${l.turn.started_at}, limit ${l.turn.deadline}`);
    if (l.last)
      lines.push(
        `  last: run ${l.last.run_id ?? '?'} ${l.last.outcome} at ${l.last.ended_at}${l.last.summary ? `: ${l.last.summary}` : ''}`,
      );
    lines.push(
      `  spend: ${l.spend.turns} turns, ${l.spend.tokens} tokens, $${l.spend.cost_usd}${l.failures ? `; ${l.failures} failed turns in a row` : ''}`,
    );
  }
  for (const p of doc.problems) lines.push(`problem: ${p}`);
  return lines.join('\n');
}
