/**
 * Store text inside Markdown the editor renders (the tree's tooltips, an agent tool's confirmation):
 * always as data, so a title, reason, command or command output can show no link, image or markup
 * of its own.
 */
import * as vscode from 'vscode';
import { markdownLiteral } from '../../core/index';

/**
 * A tooltip for store text: untrusted (no command links), no HTML, no theme icons. Store text only
 * goes in through `appendPlain` and `appendCode`, never into Markdown source directly: a title,
 * reason or command output could otherwise close a code block and show links or load images.
 */
export function tooltip(): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.isTrusted = false;
  md.supportHtml = false;
  md.supportThemeIcons = false;
  return md;
}

/**
 * Store text as plain text (core/views/markdown-text.ts): `appendText` escapes only the characters that
 * start markup, so a bare `https://…`, `www.…` or `name@host` would still show as a link.
 */
export function appendPlain(md: vscode.MarkdownString, s: string): vscode.MarkdownString {
  return md.appendMarkdown(markdownLiteral(s));
}

/** Text that shows as exactly itself, whether VS Code renders it as Markdown or as plain text. */
export function literalMarkdown(s: string): vscode.MarkdownString {
  return appendPlain(tooltip(), s);
}

/**
 * Text shown verbatim in a fenced code block (a command, a command's output). `appendCodeblock`
 * makes its fence longer than every run of backticks that starts a line; a closing fence may also
 * be indented by up to three spaces (CommonMark), which it does not count, so text with such a
 * line gets a fence longer than those too.
 */
export function appendCode(md: vscode.MarkdownString, code: string, language = ''): vscode.MarkdownString {
  if (!/^ {1,3}`{3,}/m.test(code)) return md.appendCodeblock(code, language);
  const longest = Math.max(...(code.match(/^ {0,3}`+/gm) ?? []).map((r) => r.trimStart().length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return md.appendMarkdown(`\n${fence}${language}\n${code}\n${fence}\n`);
}
