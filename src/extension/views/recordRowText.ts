/**
 * What the Goals tree's record rows say (evidence, runs, refusals) and the policy's rows above the
 * goals, without the editor API: as rowText.ts, the label says what happened or what to do, the
 * description the outcome in a word or two, the tooltip the rest.
 */
import * as path from 'node:path';
import type { Denial, Evidence, GoalState, InvalidPolicyStatus, Run } from '../../core/index';
import {
  denialSubject,
  describeActor,
  duration,
  num,
  oneLine,
  policyProblem,
  relativeTime,
  spendWords,
  usd,
  whenText,
} from '../../core/index';
import type { RowText, TipBlock } from './rowText';

/** How a command's evidence ended, short (its icon says pass or fail): `ok`, `exit 2`; else its kind. */
function evidenceOutcome(e: Evidence): string {
  if (e.exitCode === undefined) return e.kind;
  return e.exitCode === 0 ? 'ok' : `exit ${e.exitCode}`;
}

/**
 * A command's or test's evidence is labelled by what ran (its command, else its todo), not by its
 * output's first line (`exit 0 in 0.07 s`); a note or a file by its own first line.
 */
export function evidenceRow(e: Evidence, g: GoalState, now: number): RowText {
  const todo = e.todoId ? g.todos.find((t) => t.id === e.todoId) : undefined;
  const ran = e.kind === 'command' || e.kind === 'test' ? (e.command ?? todo?.title) : e.command;
  const label = ran ?? e.summary.split('\n')[0] ?? '';
  const tooltip: TipBlock[] = [
    { text: `${e.id} · ${e.kind} by ${describeActor(e.by)} at ${whenText(e.at, now)}` },
  ];
  if (e.todoId) tooltip.push({ text: `For todo ${e.todoId}${todo ? `: ${todo.title}` : ''}` });
  if (e.command !== undefined) tooltip.push({ code: e.command, language: 'sh' });
  if (e.exitCode !== undefined)
    tooltip.push({
      text: `Exit code ${e.exitCode}${e.durationMs !== undefined ? ` after ${duration(e.durationMs / 1000)}` : ''}`,
    });
  tooltip.push({ code: e.summary });
  return {
    label: oneLine(label, 80) || e.kind,
    description: `${evidenceOutcome(e)} · ${relativeTime(e.at, now)}`,
    tooltip,
  };
}

/** `$0.21`, `18,250 tokens`: what a run spent besides its one turn, or '' when nothing more. */
function spendShort(s: Run['spend']): string {
  if (s.costUsd) return usd(s.costUsd);
  return s.tokens ? `${num(s.tokens)} tokens` : '';
}

/**
 * A run's outcome in its label, after the agent: none for a success (its icon is a green check, and
 * the room goes to when and the reward), else in words (`codex failed`, `claude-code running`).
 */
const OUTCOME_WORDS: Record<string, string> = { succeeded: '', partial: 'partly done' };

/**
 * Who ran and how it went as the label (`codex`, `codex failed`, `claude-code running`); when,
 * what it spent and its rewards as the description; the run's id only in the tooltip. `rewards`:
 * `★ 0.8` for each reward; `writer`: the clone it ran on, named when the goal's runs come from
 * more than one.
 */
export function runRow(r: Run, rewards: string, writer: string | undefined, now: number): RowText {
  const outcome = r.outcome ?? (r.endedAt ? 'ended' : 'running');
  const tooltip: TipBlock[] = [
    { bold: `Run ${r.id}`, text: `· ${outcome}` },
    {
      text: `${r.agent} started ${whenText(r.startedAt, now)}${r.endedAt ? `, ended ${whenText(r.endedAt, now)}` : ''}`,
    },
    { text: `Spent ${spendWords(r.spend)}` },
  ];
  const u = r.usage;
  if (u)
    tooltip.push({
      text: `Tokens: ${num(u.input)} input, ${num(u.output)} output, ${num(u.cacheWrite)} cache write, ${num(u.cacheRead)} cache read`,
    });
  if (writer) tooltip.push({ text: `Ran ${writer}` });
  if (rewards) tooltip.push({ text: `Rewards: ${rewards}` });
  if (r.summary) tooltip.push({ text: r.summary });
  return {
    label: [r.agent, OUTCOME_WORDS[outcome] ?? outcome].filter(Boolean).join(' '),
    description: [relativeTime(r.startedAt, now), spendShort(r.spend), rewards, writer]
      .filter(Boolean)
      .join(' · '),
    tooltip,
  };
}

/**
 * A refusal: what was tried as the label (`shownPath`: a path inside the workspace relative to
 * it), who and when as the description, and the whole of it (command, path, the reason) in the
 * tooltip.
 */
export function denialRow(d: Denial, shownPath: string | undefined, now: number): RowText {
  const tooltip: TipBlock[] = [
    {
      text: `${d.enforced ? 'Refused' : 'Would have refused (observe mode let it through)'}: ${d.tool} for agent ${d.agent}${d.runId ? ` in run ${d.runId}` : ''} at ${whenText(d.at, now)}`,
    },
  ];
  if (d.command !== undefined) tooltip.push({ code: d.command, language: 'sh' });
  if (d.path !== undefined) tooltip.push({ text: d.path });
  tooltip.push({ text: `Why (${d.code}): ${d.reason}` });
  return {
    label: denialSubject({ ...d, path: shownPath }, 60),
    description: [d.agent, relativeTime(d.at, now), d.enforced ? '' : 'observe'].filter(Boolean).join(' · '),
    tooltip,
  };
}

/** policy.json edited and not signed: the row that opens the review (`message` says it all). */
export function unsignedPolicyRow(unsigned: string[], message: string): RowText {
  return {
    label: 'Policy changes to sign',
    description: unsigned.join(', '),
    tooltip: [{ text: message }, { text: 'Click to review the change and sign it.' }],
  };
}

/**
 * policy.json that does not parse: the fix as the label, what is wrong as the description, and in
 * the tooltip the same words `loopx status` and the dashboard give (core/views/policy-advice.ts),
 * the file's whole path with them, and the line the click opens it at.
 */
export function invalidPolicyRow(status: InvalidPolicyStatus): RowText {
  const line = status.error?.line;
  const problem = policyProblem(status);
  return {
    // The file's name and the problem's head (`not valid JSON`, the field) fit the default width.
    label: `Fix ${path.basename(status.error?.file ?? 'policy.json')}`,
    description: problem.split(': ')[0] ?? problem,
    tooltip: [
      { text: status.message ?? problem },
      { text: line ? `Click to open it at line ${line}.` : 'Click to open it.' },
    ],
  };
}
