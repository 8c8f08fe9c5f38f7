/**
 * The one rule for which characters text in the store may hold, and how text is made safe to show.
 * Imported by the webview too (through model/goal-state.ts), so it depends on nothing.
 *
 * Control characters make a title lie in a terminal (escape sequences) or break a line-based log
 * reader. Invisible characters make what a person reads differ from what runs or what is signed:
 * bidi controls reorder text on screen (`rm -rf /‮tmp` reads as a harmless path), zero-width
 * characters and tag characters hide words from the reader while an agent's model still reads
 * them. None of them has a use in a title, a reason, a note or a command, so all are refused there.
 * The emoji variation selectors U+FE00-U+FE0F are kept (they only pick a glyph's presentation).
 */

/** C0 and C1 controls, DEL and the Unicode line separators: not in one-line text. */
const CONTROL_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
/** The same, but newline and tab are allowed: multi-line text (reasons, notes, output). */
const CONTROL_MULTI_LINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/u;
/**
 * Characters that change or hide what is shown: bidi embeddings, overrides, isolates and marks;
 * zero-width spaces and joiners; invisible operators; soft hyphen; Hangul fillers; tag characters
 * and the supplementary variation selectors (both used to smuggle text past a reader).
 */
// The class lists joiners and selectors one by one on purpose: each is matched on its own.
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/u;

const NAMES: Record<number, string> = {
  0x061c: 'ARABIC LETTER MARK',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
};

/** `U+202E RIGHT-TO-LEFT OVERRIDE` for one character. */
function codePointName(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase().padStart(4, '0');
  return NAMES[cp] ? `U+${hex} ${NAMES[cp]}` : `U+${hex}`;
}

/**
 * What is wrong with a text under the rule, or undefined when it is fine: the first offending
 * character, named, with its position (1-based), so a person can find it.
 */
export function textProblem(s: string, opts: { multiLine?: boolean } = {}): string | undefined {
  const control = (opts.multiLine ? CONTROL_MULTI_LINE : CONTROL_ONE_LINE).exec(s);
  if (control) {
    const what = opts.multiLine ? 'control characters' : 'control characters or line breaks';
    return `must not contain ${what} (${codePointName(control[0])} at position ${control.index + 1})`;
  }
  const hidden = INVISIBLE.exec(s);
  if (hidden) {
    return `must not contain invisible or direction-changing characters (${codePointName(hidden[0])} at position ${hidden.index + 1}): what a person reads must be what runs`;
  }
  return undefined;
}

const CONTROL_ONE_LINE_ALL = new RegExp(CONTROL_ONE_LINE.source, 'gu');
const CONTROL_MULTI_LINE_ALL = new RegExp(CONTROL_MULTI_LINE.source, 'gu');
// eslint-disable-next-line no-misleading-character-class -- the same class as INVISIBLE
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');

/**
 * Text that did not come from a person or agent typing it (a command's output, a client's name):
 * the same characters removed instead of refused, so that it can be recorded.
 */
export function withoutUnsafeCharacters(s: string, opts: { multiLine?: boolean } = {}): string {
  return s
    .replace(opts.multiLine ? CONTROL_MULTI_LINE_ALL : CONTROL_ONE_LINE_ALL, '')
    .replace(INVISIBLE_ALL, '');
}

/**
 * Store text shown as plain words inside LoopX's own message (a notification, a dialog title): no
 * link or code syntax (VS Code renders `[label](command:...)` in a notification as a link that runs
 * the command), no quote that could close ours, on one line, `max` characters at most (then `…`).
 * Never for a command a person decides on: show those whole, in a dialog's detail or a code block.
 */
export function plainText(s: string, max = 60): string {
  const clean = s
    .replace(CONTROL_ONE_LINE_ALL, ' ')
    .replace(INVISIBLE_ALL, '')
    .replace(/[[\]()`"]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!clean) return '(no name)';
  return clean.length > max ? `${clean.slice(0, max).trimEnd()}…` : clean;
}

/**
 * Store text on one line, for a list or a label: line breaks and tabs become spaces, `max`
 * characters at most (then `…`), cut between whole code points. Unlike `plainText` it keeps every
 * character else, so a command reads as it ran; what it shortens is shown whole elsewhere.
 */
export function oneLine(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  const chars = Array.from(one);
  return chars.length > max ? `${chars.slice(0, max).join('').trimEnd()}…` : one;
}

/**
 * Text from outside (a request path, an error a client caused) made safe for one log line or
 * error message: control characters shown as `?`, invisible ones dropped, `max` characters at most.
 */
export function forLogLine(s: string, max = 200): string {
  const clean = s.replace(CONTROL_ONE_LINE_ALL, '?').replace(INVISIBLE_ALL, '');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
