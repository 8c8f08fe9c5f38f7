/**
 * Someone else's words inside LoopX's own text (a decision dialog, a terminal prompt): every line
 * marked as a quote, so nothing in it reads as LoopX's sentence, and bounded, so it cannot push
 * the facts around it out of sight. A closing line, LoopX's, says whether it was all and where
 * the rest is.
 */

export interface QuoteBounds {
  /** Lines shown at most. */
  lines: number;
  /** Characters shown at most, over all lines (a line past it is cut with `…`). */
  chars: number;
}

export const DIALOG_QUOTE: QuoteBounds = { lines: 6, chars: 600 };

export interface Quoted {
  /** The shown lines, each starting with the quote mark. */
  lines: string[];
  /** Whether some of the text is not shown. */
  cut: boolean;
  /** How many lines the text has. */
  total: number;
  /** Whether the last shown line is cut short. */
  lastCut: boolean;
}

const MARK = '│ ';

export function quoteText(text: string, bounds: QuoteBounds): Quoted {
  const all = text.replace(/\s+$/, '').split('\n');
  const lines: string[] = [];
  let budget = bounds.chars;
  let cut = false;
  let lastCut = false;
  for (const line of all) {
    if (lines.length === bounds.lines || budget <= 0) {
      cut = true;
      break;
    }
    const chars = Array.from(line);
    if (chars.length > budget) {
      lines.push(`${MARK}${chars.slice(0, budget).join('')}…`);
      cut = lastCut = true;
      break;
    }
    lines.push(`${MARK}${line}`.trimEnd());
    budget -= Math.max(chars.length, 1);
  }
  return { lines, cut, total: all.length, lastCut };
}

/**
 * The quote and LoopX's closing line: `└ end of the agent's words`, or how much is not shown and
 * `more` (where to read it whole).
 */
export function quotedBlock(
  text: string,
  whose: string,
  bounds: QuoteBounds,
  more: string,
): { lines: string[]; cut: boolean } {
  const q = quoteText(text, bounds);
  const shownLines = q.lines.length;
  const close = q.cut
    ? `└ not all shown (${shownLines} of ${q.total} line${q.total === 1 ? '' : 's'}${q.lastCut ? ', the last one cut' : ''}): ${more}`
    : `└ end of ${whose}`;
  return { lines: [...q.lines, close], cut: q.cut };
}
