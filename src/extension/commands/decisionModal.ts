/**
 * The one question before a command changes state on the person's behalf. Arguments (from a tree
 * node, a notification, another extension, an agent tool that runs commands) only choose what the
 * decision is about and fill in its values; the decision itself is the person's click on this
 * modal, whose detail states every fact of it: the numbers, the score and comment, the todo's
 * title and whole command, the goal, the files written.
 */
import { textProblem } from '../../core/index';
import * as vscode from 'vscode';
import type { Arg } from './shared';
import { calledWithArguments, Cancelled } from './shared';

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
 * What led to a decision's question: the person in LoopX's own views (the tree, the palette, a
 * gate notification, the dashboard panel), other code calling a command with arguments, or a
 * dashboard link opened from outside the editor. The modal says so unless it was the person.
 */
export type AskedBy = 'person' | 'command' | 'link';

export const askedBy = (a: Arg): AskedBy => (calledWithArguments(a) ? 'command' : 'person');

const NOT_A_CLICK: Record<Exclude<AskedBy, 'person'>, string> = {
  command: 'This was asked by a command call, not by a click in LoopX',
  link: 'This was asked by a link opened from outside the editor (a page in the browser), not by a click in LoopX',
};

/**
 * Asks the person in a modal and returns the button they picked (`d.action` or one of `more`);
 * throws `Cancelled` when they close it. Asked other than by them, the modal says so.
 */
export async function askDecision(d: Decision, asked: AskedBy, more: string[] = []): Promise<string> {
  // Only the line ends go: a command shown whole on the last line keeps its trailing spaces.
  const detail =
    asked === 'person'
      ? d.detail.replace(/\n+$/, '')
      : `${d.detail}${NOT_A_CLICK[asked]}: ${d.verb} only if you meant to.`;
  const choice = await vscode.window.showWarningMessage(
    d.message,
    { modal: true, detail },
    d.action,
    ...more,
  );
  if (choice === undefined) throw new Cancelled();
  return choice;
}

/**
 * Arguments from other code decide nothing by themselves: called with them, the command asks the
 * person in a modal first. `decision` is only built then. Returns whether it asked.
 */
export async function confirmIfCalledWithArguments(a: Arg, decision: () => Decision): Promise<boolean> {
  if (!calledWithArguments(a)) return false;
  await confirmDecision(a, decision);
  return true;
}

/** Asks the person in a modal and throws `Cancelled` unless they click the action. */
export async function confirmDecision(a: Arg, decision: () => Decision): Promise<void> {
  const d = decision();
  if ((await askDecision(d, askedBy(a))) !== d.action) throw new Cancelled();
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
