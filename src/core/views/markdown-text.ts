/**
 * Text from agents and people inside Markdown that something renders (`loopx export`, chat
 * answers, the editor's tooltips and agent-tool confirmations): never trusted as Markdown. One
 * rule for all of them: every ASCII punctuation character is backslash-escaped, and commands are
 * code spans, so a title cannot add a link, an image, a heading or HTML of its own.
 */
import { forLogLine, oneLine } from '../model';

/**
 * Text written into Markdown so that it renders as exactly that text: no link, image, HTML,
 * emphasis, heading, list, quote or code block of its own.
 *
 * Escaping only the characters that start markup (what `MarkdownString.appendText` does) is not
 * enough: renderers also link a bare `https://…`, `www.…` or `name@host` (GFM autolinks), read `<`
 * as HTML and `&` as an entity. CommonMark lets a backslash escape any ASCII punctuation character,
 * which then is plain text, so all of them are escaped: no construct can start, and no autolink can
 * match, since each needs a `:`, `.` or `@` as written. Both of VS Code's renderers, the HTML one
 * (hovers, chat) and the plain-text one (modal dialogs), undo the escapes.
 *
 * Spaces and tabs become `&nbsp;`, as `appendText` writes them: leading spaces would be dropped or
 * make a code block, and a run of spaces would show as one. The plain-text renderer turns them back
 * into spaces. A line break becomes a paragraph break, the one break both renderers keep.
 */

/** Every ASCII punctuation character: the ones CommonMark lets a backslash escape. */
const ASCII_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

export function markdownLiteral(s: string): string {
  return s
    .replace(ASCII_PUNCTUATION, '\\$&')
    .replace(/[ \t]/g, '&nbsp;')
    .replace(/\r\n?|\n/g, '\n\n');
}

/** One line of untrusted text, inert in Markdown (`markdownLiteral`'s escapes, on one line). */
export function mdText(s: string, max = 2000): string {
  return forLogLine(oneLine(s, max), Number.MAX_SAFE_INTEGER).replace(ASCII_PUNCTUATION, '\\$&');
}

/** Untrusted text that may span lines, as a block quote of inert lines. */
export function mdQuote(s: string, indent = ''): string {
  const lines = s.trim().split(/\r?\n/);
  return lines.map((l) => `${indent}> ${l.trim() ? mdText(l) : ''}`.trimEnd()).join('\n');
}

/** A code span that holds any text: a fence longer than any run of backticks inside it. */
export function mdCode(s: string): string {
  const text = forLogLine(oneLine(s, 4000), Number.MAX_SAFE_INTEGER);
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') || text.startsWith(' ') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}
