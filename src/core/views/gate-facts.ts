/**
 * What a person reads before deciding on a gate, built once for the terminal and the editor's
 * modal: who asked and through which channel, the requester's reason marked as their words, and
 * every todo the decision is about with its command in full. The same work list goes into the
 * capability as `shown`, so the signed decision covers exactly what was read.
 */
import type { Actor, Gate, GoalState, GuardedWork, Policy } from '../model';
import { guardedWork, openWorkGuardedBy } from '../rules';
import type { QuoteBounds } from './quoted-text';
import { DIALOG_QUOTE, quotedBlock } from './quoted-text';
import { whenText } from './when-text';

export type GateDecision = 'approve' | 'reject';

interface GateFacts {
  /** The work the decision covers (approve) or cancels (reject), as the capability's `shown`. */
  work: GuardedWork[];
  /** Several lines of plain text; commands whole, never cut; the reason bounded. */
  text: string;
  /** Whether the reason is not shown whole in `text`. */
  reasonCut: boolean;
}

/**
 * Who acted and through what, truthfully: `person alice in the editor`, `agent codex via mcp`,
 * `OS user root at the command line (unsigned)`. An unsigned call at a shell proves no person: it
 * is named by the agent name it gave, or else by the OS account it ran as.
 */
export function describeActor(a: Actor): string {
  if (a.channel === 'cli') {
    if (a.kind === 'user') return `person ${a.id} at the command line`;
    return `${a.osUser ? 'OS user' : a.kind} ${a.id} at the command line (unsigned)`;
  }
  const who = a.kind === 'user' ? 'person' : a.kind;
  const via =
    a.channel === 'vscode'
      ? 'in the editor'
      : a.channel === 'lm-tool'
        ? 'via a VS Code chat tool'
        : a.channel === 'browser'
          ? 'in a browser, with a passkey'
          : `via ${a.channel}`;
  return `${who} ${a.id} ${via}`;
}

/** Whose words a gate's reason is: LoopX's own, or the requester's (never presented as LoopX's). */
export function reasonWhose(gate: Pick<Gate, 'reasonByLoopx' | 'requestedBy'>): string {
  if (gate.reasonByLoopx) return 'LoopX';
  // An unsigned shell call named only by its OS account may be a person's or any program's.
  const agent = gate.requestedBy.kind === 'agent' && !gate.requestedBy.osUser;
  return agent ? 'the agent’s words' : 'the requester’s words';
}

/**
 * LoopX's facts first (the gate, every todo it lets run with its command whole, who asked), then
 * the requester's reason as a bounded quote closed by LoopX's own line, so no sentence of theirs
 * can pass for LoopX's or hide a command. `more` says where the reason is whole when it is cut;
 * `now` (ms) is the reader's clock, for when the gate was requested (`Dec 5, 14:03 (5 min ago)`).
 */
export function gateFacts(
  state: GoalState,
  policy: Policy,
  gate: Gate,
  decision: GateDecision,
  opts: { more?: string; bounds?: QuoteBounds; now?: number } = {},
): GateFacts {
  const work = openWorkGuardedBy(gate.id, state.todos, policy, state.gates).map(guardedWork);
  const count = `${work.length} todo${work.length === 1 ? '' : 's'}`;
  const lines = [
    `Gate ${gate.id} of goal ${state.id} (${state.title})`,
    work.length === 0
      ? decision === 'approve'
        ? 'It guards no open work now.'
        : 'Rejecting it cancels no open work.'
      : decision === 'approve'
        ? `Approving lets agents do ${count}, exactly as listed:`
        : `Rejecting cancels ${count}:`,
  ];
  for (const w of work) {
    lines.push(`• ${w.todoId}: ${w.title}`);
    lines.push(
      w.action === undefined ? '    (no command: an agent does it and reports)' : `    $ ${w.action}`,
    );
  }
  const requested = whenText(gate.requestedAt, opts.now ?? Date.now());
  lines.push('', `Requested by ${describeActor(gate.requestedBy)} at ${requested}.`);
  const reason = gate.reason.trim();
  let reasonCut = false;
  if (reason && gate.reasonByLoopx) lines.push(`Reason (LoopX): ${reason}`);
  else if (reason) {
    const whose = reasonWhose(gate);
    const block = quotedBlock(
      reason,
      whose,
      opts.bounds ?? DIALOG_QUOTE,
      opts.more ?? `loopx gate show --goal-id ${state.id} --gate-id ${gate.id} shows it whole`,
    );
    reasonCut = block.cut;
    lines.push(`Reason, in ${whose} (not LoopX’s):`, ...block.lines);
  }
  return { work, text: lines.join('\n'), reasonCut };
}
