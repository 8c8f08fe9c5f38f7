/**
 * Text of the everyday read commands: one todo, gate or run in full, and the run, evidence and
 * reward lists. Texts that may span lines (a reason, a note, a summary) are shown whole, their
 * later lines indented under the first; list cells are cut to one line.
 */
import type {
  EvidenceOut,
  GateDoc,
  HistoryEntry,
  RewardOut,
  RunDoc,
  RunItem,
  TodoDoc,
} from '../../core/index';
import { oneLine } from '../../core/index';
import { atMinute, columns, plural, spendWords, usageLine } from './format';

/** A text that may span lines, its later lines indented to line up under the first. */
const whole = (s: string, indent: string) => s.trim().split('\n').join(`\n${indent}`);

/** `label  value` rows, labels aligned; rows with no value are left out. */
function fields(rows: [string, string | undefined][], indent = '  '): string[] {
  const shown = rows.filter((r): r is [string, string] => r[1] !== undefined && r[1] !== '');
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${indent}${k.padEnd(width)}  ${whole(v, `${indent}${' '.repeat(width)}  `)}`);
}

const byWhom = (by: string, via: string) => `${by} (${via})`;

function historyText(h: HistoryEntry[]): string[] {
  if (!h.length) return [];
  return [
    '',
    'history:',
    ...columns(
      h.map((e) => [atMinute(e.at), e.type, byWhom(e.by, e.via), e.writer_name ?? e.writer]),
      { indent: '  ' },
    ),
  ];
}

function evidenceCells(
  items: EvidenceOut[],
  opts: { run?: boolean; todo?: boolean; header?: boolean } = {},
): string[][] {
  return items.map((e) => [
    e.id,
    e.kind,
    ...(opts.todo === false ? [] : [e.todo_id ?? '-']),
    ...(opts.run === false ? [] : [e.run_id ?? '-']),
    e.exit_code !== undefined ? `${opts.header ? '' : 'exit '}${e.exit_code}` : '-',
    atMinute(e.at),
    oneLine(e.summary, 100),
  ]);
}
const evidenceRows = (items: EvidenceOut[], opts: { run?: boolean; todo?: boolean } = {}) =>
  columns(evidenceCells(items, opts), { indent: '  ' });

export function todoShowText(d: TodoDoc): string {
  const owner = d.owner === 'user' ? 'for a person' : 'for an agent';
  const out = [
    `todo ${d.id} of goal ${d.goal_id}: ${d.title}`,
    ...fields([
      ['status', `${d.status} (${d.priority}, ${owner})`],
      ['command', d.action !== undefined ? `$ ${d.action}` : 'none: done by judgment, and reported'],
      [
        'claimed by',
        d.claimed_by ? `${d.claimed_by}${d.claimed_at ? ` since ${atMinute(d.claimed_at)}` : ''}` : undefined,
      ],
      [
        'added by',
        d.added_by
          ? `${byWhom(d.added_by, d.added_via ?? '?')} at ${atMinute(d.created_at)}`
          : atMinute(d.created_at),
      ],
      ['updated', atMinute(d.updated_at)],
      ['note', d.note],
    ]),
  ];
  if (d.gates.length) {
    out.push('', 'gates it needs:');
    out.push(
      ...columns(
        d.gates.map((g) => [
          g.id,
          g.status,
          g.covers ? 'its approval covers this command' : 'not cleared for this command',
          g.policy_pattern !== undefined ? `(the policy asks for it: ${g.policy_pattern})` : (g.title ?? ''),
        ]),
        { indent: '  ' },
      ),
    );
  }
  if (d.depends.length) {
    out.push('', 'after:');
    out.push(
      ...columns(
        d.depends.map((x) => [x.id, x.status, x.title ?? '']),
        { indent: '  ' },
      ),
    );
  }
  out.push('', d.evidence_records.length ? `evidence (${d.evidence_records.length}):` : 'no evidence yet');
  out.push(...evidenceRows(d.evidence_records, { todo: false }));
  out.push(...historyText(d.history));
  return out.join('\n');
}

export function gateShowText(d: GateDoc): string {
  const out = [
    `gate ${d.id} of goal ${d.goal_id}: ${d.title}`,
    ...fields([
      ['status', d.status],
      ['asked by', `${d.requested_by_words}, ${atMinute(d.requested_at)}`],
      [`reason (${d.reason_whose})`, d.reason.trim() || undefined],
      ['expires', d.expires_at ? atMinute(d.expires_at) : undefined],
    ]),
  ];
  const dec = d.decision;
  if (dec) {
    out.push('', `decision: ${dec.outcome}`);
    out.push(
      ...fields([
        [
          'by',
          dec.by_words
            ? `${dec.by_words}${dec.signed ? ', signed with their key' : ', not signed'}`
            : undefined,
        ],
        ['at', dec.at ? atMinute(dec.at) : undefined],
        ['note', dec.note],
      ]),
    );
    if (dec.approved_for) {
      out.push(`  approved, exactly as shown to them (${plural(dec.approved_for.length, 'todo')}):`);
      for (const w of dec.approved_for)
        out.push(`    ${w.todo_id}: ${w.title}${w.action !== undefined ? `\n      $ ${w.action}` : ''}`);
    }
  } else {
    out.push(
      '',
      'waiting for a person: loopx gate approve|reject --goal-id ' + `${d.goal_id} --gate-id ${d.id}`,
    );
  }
  out.push(
    '',
    d.work.length ? `work that needs it (${plural(d.work.length, 'todo')}):` : 'it guards no todo',
  );
  for (const w of d.work) {
    const covered =
      d.status === 'approved'
        ? w.covered
          ? ', covered by the approval'
          : ', not covered by the approval'
        : '';
    out.push(`  ${w.id} (${w.status}${covered}): ${w.title}`);
    out.push(
      w.action !== undefined ? `      $ ${w.action}` : '      (no command: an agent does it and reports)',
    );
  }
  out.push(...historyText(d.history));
  return out.join('\n');
}

const lastReward = (r: RunItem) => {
  const w = r.rewards[r.rewards.length - 1];
  return w ? `${w.score}` : '-';
};

export function runListText(runs: RunItem[]): string {
  if (!runs.length) return 'no runs yet';
  return columns(
    [
      ['run', 'agent', 'started', 'outcome', 'evidence', 'spend', 'reward'],
      ...runs.map((r) => [
        r.id,
        r.agent,
        atMinute(r.started_at),
        r.outcome ?? 'open',
        String(r.evidence.length),
        spendWords(r.spend),
        lastReward(r),
      ]),
    ],
    { align: ['left', 'left', 'left', 'left', 'right', 'left', 'right'] },
  ).join('\n');
}

export function runShowText(d: RunDoc): string {
  const out = [
    `run ${d.id} of goal ${d.goal_id}: ${d.agent}, ${d.outcome ?? 'still open'}`,
    ...fields([
      ['started', atMinute(d.started_at)],
      ['ended', d.ended_at ? atMinute(d.ended_at) : 'not yet'],
      ['clone', d.writer ? (d.writer_name ? `${d.writer_name} (${d.writer})` : d.writer) : undefined],
      ['spent', spendWords(d.spend)],
      ['usage', d.usage ? usageLine(d.usage) : undefined],
      ['summary', d.summary],
    ]),
  ];
  const c = d.contract;
  if (c) {
    out.push('', `contract ${c.id}, issued ${atMinute(c.issued_at)}, expires ${atMinute(c.expires_at)}:`);
    for (const a of c.actions) out.push(`  ${a.todo_id}  $ ${a.command}`);
    for (const t of c.judgment) out.push(`  ${t}  (by judgment)`);
    if (!c.actions.length && !c.judgment.length) out.push('  nothing listed');
  }
  out.push('', d.evidence.length ? `evidence (${d.evidence.length}):` : 'no evidence');
  out.push(...evidenceRows(d.evidence, { run: false }));
  out.push('', d.rewards.length ? `rewards (${d.rewards.length}):` : 'no rewards');
  out.push(...rewardRows(d.rewards, false));
  return out.join('\n');
}

export function evidenceListText(items: EvidenceOut[]): string {
  if (!items.length) return 'no evidence';
  return columns([
    ['evidence', 'kind', 'todo', 'run', 'exit', 'at', 'summary'],
    ...evidenceCells(items, { header: true }),
  ]).join('\n');
}

function rewardRows(items: RewardOut[], run = true, header = false): string[] {
  return columns(
    [
      ...(header ? [['reward', ...(run ? ['run'] : []), 'score', 'at', 'by', 'comment']] : []),
      ...items.map((w) => [
        w.id,
        ...(run ? [w.run_id] : []),
        String(w.score),
        atMinute(w.at),
        w.by,
        oneLine(w.comment, 80) + (w.lesson ? `  (lesson: ${oneLine(w.lesson, 60)})` : ''),
      ]),
    ],
    { indent: header ? '' : '  ', align: run ? ['left', 'left', 'right'] : ['left', 'right'] },
  );
}

export function rewardListText(items: RewardOut[]): string {
  if (!items.length) return 'no rewards yet';
  return rewardRows(items, true, true).join('\n');
}
