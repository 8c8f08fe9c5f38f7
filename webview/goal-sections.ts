/**
 * The goal's collapsible sections: last runs (with evidence and rewards, and where they ran when
 * a team's clones share the goal), gates, todos, what clones' merged work overruled, and what the
 * hooks refused an agent.
 */
import type { GoalStatusDoc } from '../src/core/views/browser';
import { gateButtons } from './attention';
import { badge, h, setAttr, tone } from './dom';
import { fmtBudget, fmtDate, fmtNum, plural } from './format';
import { actionControl } from './handoff';
import { withFolder } from './host';
import { state } from './state';

export function goalSections(d: GoalStatusDoc, folder?: string): HTMLElement[] {
  return [
    // Last runs with their evidence and rewards.
    section('runs', `Last runs`, String(d.runs.length), runsList(d, folder)),
    ...(d.gates.length ? [section('gates', 'Gates', gateSummary(d), gatesList(d, folder))] : []),
    section('todos', 'Todos', `${d.progress.done}/${d.progress.total} done`, todosList(d)),
    ...(d.overruled.length
      ? [section('overruled', 'Overruled', plural(d.overruled.length, 'event'), overruledList(d))]
      : []),
    ...(d.denied.length ? [section('denied', 'Refused', refusedSummary(d), refusedList(d))] : []),
  ];
}

/** `3 tool calls` or, when the document lists only the latest, `120 tool calls, the latest 20`. */
function refusedSummary(d: GoalStatusDoc): string {
  const all = plural(d.denied_total, 'tool call');
  return d.denied_total > d.denied.length ? `${all}, the latest ${d.denied.length}` : all;
}

/**
 * Tool calls the hooks refused an agent, newest first: the code, what was tried in full, who and
 * when, and the reason. Observe mode let the call through; it says so.
 */
function refusedList(d: GoalStatusDoc): Node {
  const ul = h('ul', { class: 'plain' });
  for (const x of d.denied) {
    ul.append(
      h(
        'li',
        { class: `denied${x.enforced ? '' : ' observed'}`, attrs: { 'data-denied': x.event_id } },
        h('span', { class: 'tag' }, x.code),
        x.enforced ? null : h('span', { class: 'tag observe' }, 'observe mode: let through'),
        // Its own direction: nothing in what an agent tried can reorder the words around it.
        h('code', { class: 'tried', attrs: { dir: 'ltr' } }, x.command ?? x.path ?? x.tool),
        h(
          'span',
          { class: 'muted' },
          ` ${x.tool} · ${x.agent}${x.run_id ? ` in ${x.run_id}` : ''} · ${fmtDate(x.at)}`,
        ),
        h('div', { class: 'summary' }, x.reason),
      ),
    );
  }
  return ul;
}

/** Name of the clone that wrote `writer`'s events (its recorded name, else its id). */
const writerName = (d: GoalStatusDoc, writer: string) => d.writers[writer] ?? writer;

/** Events that lost to an earlier one from another clone when the logs merged, and why. */
function overruledList(d: GoalStatusDoc): Node {
  const ul = h('ul', { class: 'plain' });
  for (const o of [...d.overruled].reverse()) {
    ul.append(
      h(
        'li',
        { attrs: { 'data-overruled': o.event_id } },
        h('span', { class: 'tag' }, o.rule),
        h('code', null, o.type),
        h('span', { class: 'muted' }, ` ${o.by} on ${writerName(d, o.writer)} · ${fmtDate(o.at)}`),
        h('div', { class: 'summary' }, o.reason),
      ),
    );
  }
  return ul;
}

function section(id: string, heading: string, description: string, body: Node): HTMLElement {
  const c = document.createElement('vscode-collapsible');
  setAttr(c, 'heading', heading);
  setAttr(c, 'description', description);
  setAttr(c, 'data-section', id);
  if (state.openSections.has(id)) setAttr(c, 'open', '');
  c.className = 'section';
  c.addEventListener('vsc-collapsible-toggle', (e) => {
    if ((e as CustomEvent<{ open: boolean }>).detail.open) state.openSections.add(id);
    else state.openSections.delete(id);
  });
  c.append(h('div', { class: 'section-body' }, body));
  return c;
}

function gateSummary(d: GoalStatusDoc): string {
  return Object.entries(d.counts.gates)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(' · ');
}

function runsList(d: GoalStatusDoc, folder?: string): Node {
  if (!d.runs.length)
    return h(
      'p',
      { class: 'muted' },
      'No runs yet. An agent starts one when it requests a contract and works a turn.',
    );
  const ul = h('ul', { class: 'runs' });
  // Where a run ran matters once the goal's runs come from more than one clone.
  const team = new Set(d.runs.map((r) => r.writer)).size > 1;
  for (const r of d.runs) {
    const where = team && r.writer ? ` on ${writerName(d, r.writer)}` : '';
    const outcome = r.outcome ?? (r.ended_at ? 'ended' : 'running');
    const spend = [
      plural(r.spend.turns, 'turn'),
      `${fmtNum(r.spend.tokens)} tokens`,
      fmtBudget('costUsd', r.spend.costUsd),
      r.spend.wallSeconds ? `${fmtNum(r.spend.wallSeconds)} s` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    const ev = h('ul', { class: 'evidence' });
    for (const e of r.evidence) {
      const code =
        e.exit_code === undefined
          ? null
          : h(
              'span',
              { class: `exit ${e.exit_code === 0 ? 'ok' : 'fail'}`, title: `exit code ${e.exit_code}` },
              e.exit_code === 0 ? '✓ exit 0' : `✗ exit ${e.exit_code}`,
            );
      ev.append(
        h(
          'li',
          { attrs: { 'data-evidence': e.id } },
          h('span', { class: 'tag' }, e.kind),
          code,
          e.todo_id ? h('code', { class: 'muted' }, e.todo_id) : null,
          h('span', { class: 'summary' }, e.summary),
          e.artifact
            ? actionControl(
                'Open',
                { type: 'open-evidence', goalId: d.id, evidenceId: e.id, ...withFolder(folder) },
                { secondary: true, label: `Open the artifact of evidence ${e.id}`, data: { evidence: e.id } },
              )
            : null,
        ),
      );
    }
    const rw = h('ul', { class: 'rewards' });
    for (const w of r.rewards) {
      rw.append(
        h(
          'li',
          null,
          h(
            'span',
            { class: `score ${w.score > 0 ? 'pos' : w.score < 0 ? 'neg' : 'zero'}` },
            w.score > 0 ? `+${w.score}` : String(w.score),
          ),
          h('span', { class: 'comment' }, w.comment || '(no comment)'),
        ),
      );
    }
    ul.append(
      h(
        'li',
        { class: 'run', attrs: { 'data-run': r.id } },
        h(
          'div',
          { class: 'run-head' },
          badge(outcome, 'outcome', tone(outcome)),
          h('code', null, r.id),
          h('span', { class: 'muted' }, ` ${r.agent}${where} · ${fmtDate(r.started_at)} · ${spend}`),
        ),
        r.evidence.length ? ev : h('p', { class: 'muted small' }, 'No evidence recorded.'),
        r.rewards.length ? rw : null,
      ),
    );
  }
  return ul;
}

function gatesList(d: GoalStatusDoc, folder?: string): Node {
  const ul = h('ul', { class: 'plain' });
  for (const g of d.gates) {
    const actions =
      g.status === 'pending'
        ? h('span', { class: 'att-actions' }, ...gateButtons({ goalId: d.id, gateId: g.id, folder }))
        : null;
    ul.append(
      h(
        'li',
        { class: 'gate-line' },
        badge(g.status, 'gate-status', tone(g.status)),
        h(
          'span',
          null,
          h('strong', null, g.title),
          h(
            'span',
            { class: 'muted' },
            ` (${g.id})${g.reason ? ` · ${g.reason}` : ''}${g.decided_by ? ` · ${g.status} by ${g.decided_by}${g.signed ? ', signed' : ''}` : ` · requested by ${g.requested_by} via ${g.requested_via}`}`,
          ),
        ),
        actions,
      ),
    );
  }
  return ul;
}

function todosList(d: GoalStatusDoc): Node {
  if (!d.todos.length) return h('p', { class: 'muted' }, 'No todos yet: add one with LoopX: Add Todo.');
  const ul = h('ul', { class: 'plain todos' });
  for (const t of d.todos) {
    ul.append(
      h(
        'li',
        { class: `todo todo-${t.status}` },
        h(
          'span',
          { class: `check ${t.status}`, attrs: { 'aria-hidden': 'true' } },
          t.status === 'done' ? '✓' : t.status === 'cancelled' ? '–' : t.status === 'claimed' ? '◐' : '○',
        ),
        h('span', { class: 'todo-title' }, t.title),
        h(
          'span',
          { class: 'muted' },
          ` ${t.priority} · ${t.owner === 'user' ? 'for a person' : 'agent'} · ${t.status}${t.gate ? ` · gate ${t.gate}` : ''}${t.claimed_by ? ` · ${t.claimed_by}` : ''}`,
        ),
      ),
    );
  }
  return ul;
}
