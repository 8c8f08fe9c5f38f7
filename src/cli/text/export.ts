/**
 * `loopx export`'s Markdown report of a goal. Every text in it came from agents or people, so
 * none goes in but through core/views/markdown-text.ts: a title cannot add a link, an image, a heading
 * or HTML to the report.
 */
import type { EvidenceOut, ExportDoc, RewardOut, RunItem } from '../../core/index';
import { mdCode, mdQuote, mdText } from '../../core/index';
import { atMinute, listWords, plural, quotaLine, spendWords, usageLine } from './format';

const MARK: Record<string, string> = { open: '[ ]', claimed: '[ ]', done: '[x]', cancelled: '[x]' };

function evidenceLine(e: EvidenceOut): string {
  const parts = [
    `${mdCode(e.id)} ${e.kind}`,
    e.todo_id ? `todo ${mdCode(e.todo_id)}` : '',
    e.exit_code !== undefined ? `exit ${e.exit_code}` : '',
    e.command !== undefined ? mdCode(e.command) : '',
  ].filter(Boolean);
  return `${parts.join(', ')}: ${mdText(e.summary, 500)}`;
}

const rewardLine = (w: RewardOut) =>
  `${w.score} by ${mdText(w.by)} (${atMinute(w.at)}): ${mdText(w.comment, 500)}${w.lesson ? `; lesson: ${mdText(w.lesson, 500)}` : ''}`;

function runSection(r: RunItem, d: ExportDoc): string[] {
  const out = [
    `### Run ${mdCode(r.id)}: ${mdText(r.agent)}, ${r.outcome ?? 'still open'}`,
    '',
    `- Started ${atMinute(r.started_at)}${r.ended_at ? `, ended ${atMinute(r.ended_at)}` : ''}${r.contract_id ? `, under contract ${mdCode(r.contract_id)}` : ''}`,
    `- Spent: ${spendWords(r.spend)}${r.usage ? ` (${usageLine(r.usage)})` : ''}`,
  ];
  const evidence = d.evidence.filter((e) => e.run_id === r.id);
  const rewards = d.rewards.filter((w) => w.run_id === r.id);
  out.push(evidence.length ? `- Evidence (${evidence.length}):` : '- No evidence');
  for (const e of evidence) out.push(`  - ${evidenceLine(e)}`);
  if (rewards.length) {
    out.push(`- Rewards (${rewards.length}):`);
    for (const w of rewards) out.push(`  - ${rewardLine(w)}`);
  }
  out.push('');
  return out;
}

export function exportMarkdown(d: ExportDoc): string {
  const g = d.goal;
  const out = [
    `# ${mdText(g.title)}`,
    '',
    `Goal ${mdCode(g.id)}, ${g.status}: ${g.progress.done} of ${plural(g.progress.total, 'todo')} done. Created ${atMinute(g.created_at)}, last changed ${atMinute(g.updated_at)}; exported ${atMinute(d.exported_at)} (${plural(d.events.length, 'event')}).`,
    '',
    '## Objective',
    '',
    g.objective.trim() ? mdQuote(g.objective) : '_No objective given._',
    '',
    '## Quota and spend',
    '',
    `- Budgets (${g.quota.window}): ${quotaLine(g.quota.budgets)}`,
    `- Spent in all: ${spendWords(g.quota.spend)}`,
    `- Rewards: ${g.rewards.count ? `${g.rewards.count}, mean ${g.rewards.mean}` : 'none yet'}`,
    '',
    '## Todos',
    '',
  ];
  if (!g.todos.length) out.push('_No todos yet._');
  for (const t of g.todos) {
    const extra = [
      t.owner === 'user' ? 'for a person' : '',
      t.gate ? `gate ${mdCode(t.gate)}` : '',
      t.depends_on.length ? `after ${listWords(t.depends_on.map(mdCode))}` : '',
      t.claimed_by && t.status === 'claimed' ? `claimed by ${mdText(t.claimed_by)}` : '',
    ].filter(Boolean);
    out.push(
      `- ${MARK[t.status] ?? '[ ]'} ${t.priority} ${mdCode(t.id)} ${mdText(t.title)} (${t.status}${extra.length ? `; ${extra.join(', ')}` : ''})${t.action !== undefined ? `: ${mdCode(t.action)}` : ''}`,
    );
    for (const e of d.evidence.filter((x) => x.todo_id === t.id || t.evidence.includes(x.id)))
      out.push(`  - Evidence ${evidenceLine(e)}`);
  }
  out.push('', '## Gates', '');
  if (!d.gates.length) out.push('_No gates._', '');
  for (const x of d.gates) {
    out.push(`### Gate ${mdCode(x.id)}: ${mdText(x.title)}, ${x.status}`, '');
    out.push(`- Asked by ${mdText(x.requested_by_words)}, ${atMinute(x.requested_at)}`);
    if (x.reason.trim()) out.push(`- Reason (${x.reason_whose}):`, '', mdQuote(x.reason, '  '), '');
    for (const w of x.work)
      out.push(
        `- Guards ${mdCode(w.id)} ${mdText(w.title)} (${w.status}${x.status === 'approved' ? (w.covered ? ', covered by the approval' : ', not covered') : ''})${w.action !== undefined ? `: ${mdCode(w.action)}` : ''}`,
      );
    const dec = x.decision;
    if (dec) {
      const by = dec.by_words ? ` by ${mdText(dec.by_words)}` : '';
      out.push(
        `- Decision: ${dec.outcome}${by}${dec.at ? `, ${atMinute(dec.at)}` : ''}, ${dec.signed ? 'signed' : 'not signed'}`,
      );
      if (dec.note?.trim()) out.push('- Note with the decision:', '', mdQuote(dec.note, '  '), '');
    } else out.push('- Waiting for a person’s decision');
    out.push('');
  }
  out.push('## Runs', '');
  if (!d.runs.length) out.push('_No runs yet._', '');
  for (const r of d.runs) out.push(...runSection(r, d));
  return `${out.join('\n').trimEnd()}\n`;
}
