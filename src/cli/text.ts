/** Text renderings for a person at a terminal. JSON output never goes through here. */
import type {
  GoalStatusDoc,
  StatusDoc,
  ShouldRunOutput,
  SummaryDoc,
  RepairReport,
  CapabilityDeclaration,
  GoalCheck,
  PolicyStatus,
  DeniedOut,
  UsageOut,
} from '../core/index';
import { denialSubject, oneLine } from '../core/index';

const MARK: Record<string, string> = { open: '[ ]', claimed: '[~]', done: '[x]', cancelled: '[-]' };

function quotaLine(budgets: Record<string, { used: number; limit: number; left: number }>): string {
  const parts = Object.entries(budgets).map(([k, u]) => `${k} ${u.used}/${u.limit}`);
  return parts.length ? parts.join(', ') : 'no budget set';
}

export function goalText(d: GoalStatusDoc): string {
  const out = [
    `${d.title}  (${d.id})`,
    `status: ${d.status}   progress: ${d.progress.done}/${d.progress.total} todos done   quota: ${quotaLine(d.quota.budgets)}`,
  ];
  if (d.objective) out.push(`objective: ${d.objective.split('\n')[0]}`);
  if (d.attention.length) {
    out.push('', 'needs attention:');
    for (const a of d.attention) out.push(`  ! ${a.kind} ${a.id}: ${a.title} — ${a.detail}`);
  }
  if (d.todos.length) {
    out.push('', 'todos:');
    for (const t of d.todos) {
      const extra = [
        t.owner === 'user' ? 'owner user' : '',
        t.gate ? `gate ${t.gate}` : '',
        t.claimed_by && t.status === 'claimed' ? `claimed by ${t.claimed_by}` : '',
        t.depends_on.length ? `after ${t.depends_on.join(',')}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      out.push(
        `  ${MARK[t.status] ?? '[?]'} ${t.priority} ${t.id}  ${t.title}${t.action ? `  $ ${t.action}` : ''}${extra ? `  (${extra})` : ''}`,
      );
    }
  }
  if (d.gates.length) {
    out.push('', 'gates:');
    for (const g of d.gates)
      out.push(
        `  ${g.status.padEnd(8)} ${g.id}  ${g.title}${g.decided_by ? `  (by ${g.decided_by}${g.signed ? ', signed' : ''})` : ''}`,
      );
  }
  if (d.runs.length) {
    out.push('', 'recent runs:');
    for (const r of d.runs.slice(0, 5)) {
      const rw = r.rewards.map((w) => `reward ${w.score}`).join(', ');
      out.push(
        `  ${r.id}  ${r.agent}  ${r.outcome ?? 'open'}  ${r.evidence.length} evidence${rw ? `  ${rw}` : ''}`,
      );
      if (r.usage) out.push(`      ${usageLine(r.usage)}`);
    }
  }
  if (d.denied.length) out.push('', ...refusedLines(d.denied, d.denied_total));
  for (const w of d.warnings) out.push(`warning: ${w}`);
  return out.join('\n');
}

/** How many refusals, the newest, a goal's text shows (the JSON has more). */
const REFUSED_SHOWN = 5;

/** `tokens: 1200 input, 300 output, 5000 cache write, 20000 cache read`. */
function usageLine(u: UsageOut): string {
  return `tokens: ${u.input} input, ${u.output} output, ${u.cache_write} cache write, ${u.cache_read} cache read`;
}

/** `2026-11-30 10:04 UTC`: the minute is enough to find it in `loopx log`. */
function atMinute(iso: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC` : iso;
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

export function statusText(d: StatusDoc): string {
  const policy = d.policy.message ? [`policy     ${d.policy.message}`] : [];
  if (d.goals.length === 0 && d.errors.length === 0) {
    return [
      'No goals yet. Create one: loopx project_prompt create --title "..." --description "..."',
      ...policy,
    ].join('\n');
  }
  const out: string[] = [...policy];
  for (const g of d.goals) {
    out.push(
      `${g.status.padEnd(10)} ${`${g.progress.done}/${g.progress.total}`.padStart(7)}  ${g.id}  ${g.title}${notes(g)}`,
    );
  }
  for (const e of d.errors) out.push(`error      ${e.goal_id}: ${e.message}`);
  if (d.attention.length) {
    out.push('', 'needs attention:');
    for (const a of d.attention.slice(0, 20)) out.push(`  ! ${a.goal_id}: ${a.detail}`);
  }
  return out.join('\n');
}

/** `  (1 gate pending, 4 refused)` after a goal's line, or nothing. */
function notes(g: StatusDoc['goals'][number]): string {
  const n = [
    g.pending_gates ? `${g.pending_gates} gate${g.pending_gates > 1 ? 's' : ''} pending` : '',
    g.denied ? `${g.denied} refused` : '',
  ].filter(Boolean);
  return n.length ? `  (${n.join(', ')})` : '';
}

export function shouldRunText(d: ShouldRunOutput): string {
  const c = d.interaction_contract;
  const out = [
    `${d.decision.toUpperCase()}  goal ${d.goal_id} (${d.status})`,
    ...d.reasons.map((r) => `  - ${r}`),
  ];
  if (d.retry_after_seconds) out.push(`  retry after ${d.retry_after_seconds} s`);
  if (c.id) out.push(`contract ${c.id} for run ${d.run_id}, expires ${c.expires_at}`);
  if (c.cli_channel.next_cli_actions.length) {
    out.push('next actions:');
    for (const a of c.cli_channel.next_cli_actions) out.push(`  ${a}`);
  }
  const p = c.agent_channel.primary;
  if (p && !p.command)
    out.push(
      `judgment todo ${p.todo_id}: ${p.title}${p.complete_with ? `\n  finish with: ${p.complete_with}` : ''}`,
    );
  if (c.user_channel.action_required) {
    out.push('for a person:');
    if (c.user_channel.message) out.push(`  ${c.user_channel.message}`);
    for (const g of c.user_channel.gates)
      out.push(`  gate ${g.id} (${g.status}): ${g.reason}\n    ${g.approve}`);
    for (const t of c.user_channel.todos) out.push(`  todo ${t.id}: ${t.title}`);
  }
  if (d.preview) out.push('(preview: no run was opened)');
  return out.join('\n');
}

export function summaryText(d: SummaryDoc): string {
  const out = [`goal ${d.goal_id}: ${d.status}, ${d.progress.done}/${d.progress.total} todos done`];
  for (const r of d.ended_runs) {
    out.push(`ended run ${r.id}: ${r.outcome}`);
    for (const e of r.evidence)
      out.push(
        `  ${e.todo_id ?? '-'}  ${e.exit_code !== undefined ? `exit ${e.exit_code}` : ''}  ${e.summary}`,
      );
  }
  if (d.ended_runs.length === 0) out.push('no open run to end');
  out.push(
    `gates: ${
      Object.entries(d.gates)
        .filter(([, n]) => n)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ') || 'none'
    }`,
  );
  out.push(`quota: ${quotaLine(d.quota)}`);
  if (d.rewards.count) out.push(`rewards: ${d.rewards.count}, mean ${d.rewards.mean}`);
  for (const a of d.attention) out.push(`! ${a.kind} ${a.id}: ${a.detail}`);
  return out.join('\n');
}

export function repairText(r: RepairReport): string {
  if (r.findings.length === 0)
    return `checked ${r.checked_goals} goal${r.checked_goals === 1 ? '' : 's'}: nothing to repair`;
  const out = [
    `checked ${r.checked_goals} goal${r.checked_goals === 1 ? '' : 's'}${r.dry_run ? ' (dry run: nothing changed)' : ''}:`,
  ];
  for (const f of r.findings)
    out.push(`  ${f.fixed ? 'fixed ' : 'found '} ${f.kind}${f.goal_id ? ` ${f.goal_id}` : ''}: ${f.message}`);
  return out.join('\n');
}

export function verifyText(goals: GoalCheck[], policy: PolicyStatus): string {
  const out: string[] = policy.message ? [`policy  ${policy.message}`] : [];
  for (const g of goals) {
    const broken = g.writers.filter((w) => !w.ok);
    if (!g.ok) {
      out.push(
        `BROKEN  ${g.goal_id}: ${g.error ?? broken.map((w) => `writer ${w.writer}: ${w.error}`).join('; ')}`,
      );
      continue;
    }
    const torn = g.writers.filter((w) => w.torn_tail_line !== undefined);
    out.push(
      `ok      ${g.goal_id}: ${g.events} events from ${g.writers.length} writer${g.writers.length === 1 ? '' : 's'}, state ${g.state_hash?.slice(0, 12)}` +
        torn.map((w) => ` (${w.writer}: incomplete line ${w.torn_tail_line}: run self-repair)`).join(''),
    );
    for (const line of [...(g.ignored_decisions ?? []), ...(g.overruled ?? [])]) out.push(`        ${line}`);
  }
  return out.join('\n') || 'no goals';
}

export function capabilitiesText(caps: CapabilityDeclaration[]): string {
  return caps.map((c) => `${c.id.padEnd(16)} ${c.humanOnly ? '[human] ' : ''}${c.summary}`).join('\n');
}
