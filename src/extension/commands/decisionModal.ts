/**
 * The one question before a command changes state on the person's behalf. Arguments (from a tree
 * node, a notification, another extension, an agent tool that runs commands) only choose what the
 * decision is about and fill in its values; the decision itself is the person's click on this
 * modal, whose detail states every fact of it: the numbers, the score and comment, the todo's
 * title and whole command, the goal, the files written.
 */
import { textProblem } from '../../core/index';
import type { Arg } from './shared';
import { calledWithArguments, confirmModal } from './shared';

export interface Decision {
  /** The question, one line: store text in it goes through `plainText`. */
  message: string;
  /**
   * The facts, one per line, each line ending in `\n` (a last empty line sets the command-call
   * sentence apart): store text in it goes through `whole`.
   */
  detail: string;
  /** The button that decides. */
  action: string;
  /** What the person does, for "… only if you meant to" when other code asked. */
  verb: string;
}

/**
 * Arguments from other code decide nothing by themselves: called with them, the command asks the
 * person in a modal first (see `confirmModal`). `decision` is only built then; its `detail` says
 * what the decision does, and the modal adds that a command call asked and that only `verb` was
 * meant. Returns whether it asked.
 */
export async function confirmIfCalledWithArguments(a: Arg, decision: () => Decision): Promise<boolean> {
  if (!calledWithArguments(a)) return false;
  const { message, detail, action, verb } = decision();
  await confirmModal(
    message,
    `${detail}This was asked by a command call, not by a click in LoopX: ${verb} only if you meant to.`,
    action,
  );
  return true;
}

/**
 * Asks the person in a modal and throws `Cancelled` unless they click the action. Called with
 * arguments, the modal also says that a command call asked (see `confirmIfCalledWithArguments`).
 */
export async function confirmDecision(a: Arg, decision: () => Decision): Promise<void> {
  if (await confirmIfCalledWithArguments(a, decision)) return;
  const d = decision();
  // Only the line ends go: a command shown whole on the last line keeps its trailing spaces.
  await confirmModal(d.message, d.detail.replace(/\n+$/, ''), d.action);
}

/**
 * Store or argument text shown whole in a modal's detail (plain text there): never shortened, so a
 * command reads exactly as it will run. Text with characters that do not print, or that reorder
 * or hide what is shown (the store refuses them; a hand-edited file may still hold them), is shown
 * with those characters written as `\u{…}` instead, and says so.
 */
export function whole(s: string, opts: { multiLine?: boolean } = {}): string {
  if (textProblem(s, opts) === undefined) return s;
  const shown = Array.from(s, (ch) =>
    textProblem(ch, opts) === undefined
      ? ch
      : `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`,
  ).join('');
  return `${shown} (shown escaped: it holds characters that do not print)`;
}
