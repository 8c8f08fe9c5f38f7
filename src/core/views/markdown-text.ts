/**
 * Text from agents and people inside Markdown that something renders (`loopx export`, chat
 * answers): never trusted as Markdown. Control characters and line breaks are flattened, Markdown
 * and HTML punctuation is backslash-escaped, and commands are code spans, so a title cannot add a
 * link, an image, a heading or HTML of its own.
 */
import { forLogLine, oneLine } from '../model';

/** One line of untrusted text, inert in Markdown. */
export function mdText(s: string, max = 2000): string {
  return forLogLine(oneLine(s, max), Number.MAX_SAFE_INTEGER)
    .replace(/[\\`*_{}[\]()<>#+\-!|~&^=$]/g, '\\$&')
    .replace(/^(\d+)([.)])/, '$1\\$2');
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
