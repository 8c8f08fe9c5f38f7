/** The text of `loopx quota should-run`: the decision, why, and what to do next. */
import type { ShouldRunOutput } from '../../core/index';
import { atMinute, duration } from './format';

export function shouldRunText(d: ShouldRunOutput): string {
  const c = d.interaction_contract;
  const out = [
    `${d.decision.toUpperCase()}  goal ${d.goal_id} (${d.status})`,
    ...d.reasons.map((r) => `  - ${r}`),
  ];
  if (d.retry_after_seconds) out.push(`  ask again in ${duration(d.retry_after_seconds)}`);
  if (c.id) out.push(`contract ${c.id} for run ${d.run_id}, until ${atMinute(c.expires_at ?? '')}`);
  if (c.cli_channel.next_cli_actions.length) {
    out.push('next actions:');
    for (const a of c.cli_channel.next_cli_actions) out.push(`  ${a}`);
  }
  const p = c.agent_channel.primary;
  if (p && !p.command) {
    out.push(`judgment todo ${p.todo_id}: ${p.title}`);
    if (p.complete_with) out.push(`  finish with: ${p.complete_with}`);
  }
  if (c.user_channel.action_required) {
    out.push('for a person:');
    if (c.user_channel.message) out.push(`  ${c.user_channel.message}`);
    for (const g of c.user_channel.gates) {
      out.push(`  gate ${g.id} (${g.status}): ${g.reason}`);
      out.push(`    ${g.approve}`);
    }
    for (const t of c.user_channel.todos) out.push(`  todo ${t.id}: ${t.title}`);
  }
  if (d.preview) out.push('(a preview: no run was opened)');
  return out.join('\n');
}
