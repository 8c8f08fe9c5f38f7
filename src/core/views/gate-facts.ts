/**
 * What a person reads before deciding on a gate, built once for the terminal and the editor's
 * modal: who asked and through which channel, the requester's reason marked as their words, and
 * every todo the decision is about with its command in full. The same work list goes into the
 * capability as `shown`, so the signed decision covers exactly what was read.
 */
import type { Actor, Gate, GoalState, GuardedWork, Policy } from '../model';
import { guardedWork, openWorkGuardedBy } from '../rules';

export type GateDecision = 'approve' | 'reject';

interface GateFacts {
  /** The work the decision covers (approve) or cancels (reject), as the capability's `shown`. */
  work: GuardedWork[];
  /** Several lines of plain text; commands whole, never cut. */
  text: string;
}

/** `agent codex via mcp`, `person alice in the editor`. */
export function describeActor(a: Actor): string {
  const who = a.kind === 'user' ? 'person' : a.kind;
  const via =
    a.channel === 'vscode'
      ? 'in the editor'
      : a.channel === 'cli'
        ? 'at the command line'
        : a.channel === 'lm-tool'
          ? 'via a VS Code chat tool'
          : `via ${a.channel}`;
  return `${who} ${a.id} ${via}`;
}

/** Whose words a gate's reason is: LoopX's own, or the requester's (never presented as LoopX's). */
export function reasonWhose(gate: Pick<Gate, 'reasonByLoopx' | 'requestedBy'>): string {
  if (gate.reasonByLoopx) return 'LoopX';
  return gate.requestedBy.kind === 'agent' ? 'the agent’s words' : 'the requester’s words';
}

export function gateFacts(state: GoalState, policy: Policy, gate: Gate, decision: GateDecision): GateFacts {
  const work = openWorkGuardedBy(gate.id, state.todos, policy, state.gates).map(guardedWork);
  const lines = [
    `Gate ${gate.id} of goal ${state.id} (${state.title})`,
    `Requested by ${describeActor(gate.requestedBy)} at ${gate.requestedAt}.`,
  ];
  if (gate.reason.trim()) lines.push(`Reason (${reasonWhose(gate)}): ${gate.reason.trim()}`);
  const count = `${work.length} todo${work.length === 1 ? '' : 's'}`;
  lines.push(
    '',
    work.length === 0
      ? decision === 'approve'
        ? 'It guards no open work now.'
        : 'Rejecting it cancels no open work.'
      : decision === 'approve'
        ? `Approving lets agents do ${count}, exactly as listed:`
        : `Rejecting cancels ${count}:`,
  );
  for (const w of work) {
    lines.push(`• ${w.todoId}: ${w.title}`);
    lines.push(
      w.action === undefined ? '    (no command: an agent does it and reports)' : `    $ ${w.action}`,
    );
  }
  return { work, text: lines.join('\n') };
}
