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
 * Command text (what the policy's patterns match and a shell runs) also refuses lookalikes of
 * Latin letters (`confusableProblem`, below); titles and reasons may be in any script.
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

/**
 * How many lines a reason, note or summary may hold when it is written: a person decides on what a
 * dialog shows, and a dialog cannot show hundreds of lines (an agent's reason of 1,900 blank lines
 * once pushed the guarded command out of sight). Logs written before the limit may hold more, so
 * views still bound what they show (views/quoted-text.ts).
 */
export const MAX_TEXT_LINES = 20;

/** Why `s` has too many lines for text a person reads, or undefined (one final line end does not count). */
export function linesProblem(s: string, max = MAX_TEXT_LINES): string | undefined {
  const lines = s.replace(/\n$/, '').split('\n').length;
  return lines > max ? `must be at most ${max} lines (it has ${lines})` : undefined;
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

// -------------------------------------------------------------------------------------------
// Lookalikes, in commands

/*
 * A command is matched against the policy's patterns code point by code point, and a person reads
 * it by the shapes of its letters. `sh dеploy.sh` with a Cyrillic `е` reads as `sh deploy.sh` but
 * matches no pattern written in Latin letters, so a gate on the one does not stop the other. So in
 * command text (a todo's action, a pattern of the policy: what is matched and run, never a title
 * or a reason) a word must not mix Latin letters with letters of the scripts that look like them
 * (Cyrillic, Greek, Armenian, Cherokee); a word of those scripts made only of lookalikes of Latin
 * letters (`ѕһ`, `рор`) must not stand beside Latin words; and no compatibility form of a plain
 * character (fullwidth `ｅ`, mathematical `𝐞`, the ligature `ﬁ`, a no-break space) nor a Latin
 * lookalike of a plain letter (dotless `ı`, small capitals) may appear at all. A word wholly in
 * another script that does not read as Latin (`отчёт`, `ошибка`) is plain text and stays allowed.
 */

/** Letters of other scripts that are drawn like Latin ones (Unicode's confusables, UTS #39). */
const LOOKALIKE_NAMES: Record<number, string> = {
  0x0430: 'CYRILLIC SMALL LETTER A',
  0x0441: 'CYRILLIC SMALL LETTER ES',
  0x0501: 'CYRILLIC SMALL LETTER KOMI DE',
  0x0435: 'CYRILLIC SMALL LETTER IE',
  0x04bb: 'CYRILLIC SMALL LETTER SHHA',
  0x0456: 'CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I',
  0x0458: 'CYRILLIC SMALL LETTER JE',
  0x04cf: 'CYRILLIC SMALL LETTER PALOCHKA',
  0x043e: 'CYRILLIC SMALL LETTER O',
  0x0440: 'CYRILLIC SMALL LETTER ER',
  0x051b: 'CYRILLIC SMALL LETTER QA',
  0x0455: 'CYRILLIC SMALL LETTER DZE',
  0x0475: 'CYRILLIC SMALL LETTER IZHITSA',
  0x051d: 'CYRILLIC SMALL LETTER WE',
  0x0445: 'CYRILLIC SMALL LETTER HA',
  0x0443: 'CYRILLIC SMALL LETTER U',
  0x0410: 'CYRILLIC CAPITAL LETTER A',
  0x0412: 'CYRILLIC CAPITAL LETTER VE',
  0x0421: 'CYRILLIC CAPITAL LETTER ES',
  0x0415: 'CYRILLIC CAPITAL LETTER IE',
  0x041d: 'CYRILLIC CAPITAL LETTER EN',
  0x0406: 'CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I',
  0x04c0: 'CYRILLIC LETTER PALOCHKA',
  0x0408: 'CYRILLIC CAPITAL LETTER JE',
  0x041a: 'CYRILLIC CAPITAL LETTER KA',
  0x041c: 'CYRILLIC CAPITAL LETTER EM',
  0x041e: 'CYRILLIC CAPITAL LETTER O',
  0x0420: 'CYRILLIC CAPITAL LETTER ER',
  0x051a: 'CYRILLIC CAPITAL LETTER QA',
  0x0405: 'CYRILLIC CAPITAL LETTER DZE',
  0x0422: 'CYRILLIC CAPITAL LETTER TE',
  0x0425: 'CYRILLIC CAPITAL LETTER HA',
  0x04ae: 'CYRILLIC CAPITAL LETTER STRAIGHT U',
  0x051c: 'CYRILLIC CAPITAL LETTER WE',
  0x03b1: 'GREEK SMALL LETTER ALPHA',
  0x03b9: 'GREEK SMALL LETTER IOTA',
  0x03bd: 'GREEK SMALL LETTER NU',
  0x03bf: 'GREEK SMALL LETTER OMICRON',
  0x03c1: 'GREEK SMALL LETTER RHO',
  0x03b3: 'GREEK SMALL LETTER GAMMA',
  0x0391: 'GREEK CAPITAL LETTER ALPHA',
  0x0392: 'GREEK CAPITAL LETTER BETA',
  0x0395: 'GREEK CAPITAL LETTER EPSILON',
  0x0396: 'GREEK CAPITAL LETTER ZETA',
  0x0397: 'GREEK CAPITAL LETTER ETA',
  0x0399: 'GREEK CAPITAL LETTER IOTA',
  0x039a: 'GREEK CAPITAL LETTER KAPPA',
  0x039c: 'GREEK CAPITAL LETTER MU',
  0x039d: 'GREEK CAPITAL LETTER NU',
  0x039f: 'GREEK CAPITAL LETTER OMICRON',
  0x03a1: 'GREEK CAPITAL LETTER RHO',
  0x03a4: 'GREEK CAPITAL LETTER TAU',
  0x03a5: 'GREEK CAPITAL LETTER UPSILON',
  0x03a7: 'GREEK CAPITAL LETTER CHI',
  0x0570: 'ARMENIAN SMALL LETTER HO',
  0x0578: 'ARMENIAN SMALL LETTER VO',
  0x057d: 'ARMENIAN SMALL LETTER SEH',
  0x0581: 'ARMENIAN SMALL LETTER CO',
  0x0566: 'ARMENIAN SMALL LETTER ZA',
  0x0585: 'ARMENIAN SMALL LETTER OH',
};
/** Latin letters drawn like plain ones: a word of them is still Latin, so no mix shows them. */
const LATIN_LOOKALIKE_NAMES: Record<number, string> = {
  0x0131: 'LATIN SMALL LETTER DOTLESS I',
  0x0237: 'LATIN SMALL LETTER DOTLESS J',
  0x01c0: 'LATIN LETTER DENTAL CLICK',
  0x0251: 'LATIN SMALL LETTER ALPHA',
  0x0261: 'LATIN SMALL LETTER SCRIPT G',
  0x0269: 'LATIN SMALL LETTER IOTA',
  0x0262: 'LATIN LETTER SMALL CAPITAL G',
  0x026a: 'LATIN LETTER SMALL CAPITAL I',
  0x0274: 'LATIN LETTER SMALL CAPITAL N',
  0x0280: 'LATIN LETTER SMALL CAPITAL R',
  0x028f: 'LATIN LETTER SMALL CAPITAL Y',
  0x029c: 'LATIN LETTER SMALL CAPITAL H',
  0x029f: 'LATIN LETTER SMALL CAPITAL L',
  0x1d00: 'LATIN LETTER SMALL CAPITAL A',
  0x1d04: 'LATIN LETTER SMALL CAPITAL C',
  0x1d05: 'LATIN LETTER SMALL CAPITAL D',
  0x1d07: 'LATIN LETTER SMALL CAPITAL E',
  0x1d0a: 'LATIN LETTER SMALL CAPITAL J',
  0x1d0b: 'LATIN LETTER SMALL CAPITAL K',
  0x1d0d: 'LATIN LETTER SMALL CAPITAL M',
  0x1d0f: 'LATIN LETTER SMALL CAPITAL O',
  0x1d18: 'LATIN LETTER SMALL CAPITAL P',
  0x1d1b: 'LATIN LETTER SMALL CAPITAL T',
  0x1d1c: 'LATIN LETTER SMALL CAPITAL U',
  0x1d20: 'LATIN LETTER SMALL CAPITAL V',
  0x1d21: 'LATIN LETTER SMALL CAPITAL W',
  0x1d22: 'LATIN LETTER SMALL CAPITAL Z',
};

const LOOKALIKE_SCRIPTS = ['Latin', 'Cyrillic', 'Greek', 'Armenian', 'Cherokee'] as const;
type LookalikeScript = (typeof LOOKALIKE_SCRIPTS)[number];
const SCRIPT_OF: [LookalikeScript, RegExp][] = LOOKALIKE_SCRIPTS.map((s) => [
  s,
  new RegExp(`^\\p{Script=${s}}$`, 'u'),
]);
const scriptOf = (ch: string) => SCRIPT_OF.find(([, re]) => re.test(ch))?.[0];
/** Many Cherokee letters are drawn like Latin capitals and none is in a command: all count. */
const looksLatin = (ch: string) =>
  LOOKALIKE_NAMES[ch.codePointAt(0)!] !== undefined || scriptOf(ch) === 'Cherokee';

/** `U+0435 CYRILLIC SMALL LETTER IE`, or `U+0431 (Cyrillic)` for a letter the tables do not name. */
function lookalikeName(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = LOOKALIKE_NAMES[cp] ?? LATIN_LOOKALIKE_NAMES[cp];
  if (name) return `${hex} ${name}`;
  const script = scriptOf(ch);
  return script && script !== 'Latin' ? `${hex} (${script})` : hex;
}

/** A non-ASCII character that Unicode folds to plain ASCII text (`ｅ`, `𝐞`, `ﬁ`, U+00A0). */
const compatibilityForm = (ch: string) => {
  if (ch <= '\u007f') return undefined;
  const folded = ch.normalize('NFKC');
  return folded !== ch && /^[\u0020-\u007e]+$/.test(folded) ? folded : undefined;
};

/**
 * What makes command text read as something it is not, or undefined: the first lookalike
 * character, named, with its position (1-based, in characters), so a person can find it. Only for
 * text that is matched against the policy and run; `textProblem` applies to it too.
 */
export function confusableProblem(s: string): string | undefined {
  const chars = Array.from(s);
  const at = (i: number, why: string) =>
    `must not contain lookalike characters (${lookalikeName(chars[i]!)} at character ${i + 1}, ${why}): what a person reads must be what the policy's patterns match`;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (LATIN_LOOKALIKE_NAMES[ch.codePointAt(0)!]) return at(i, 'drawn like a plain Latin letter');
    const folded = compatibilityForm(ch);
    if (folded !== undefined) return at(i, `another form of ${JSON.stringify(folded)}`);
  }
  const hasLatin = chars.some((ch) => scriptOf(ch) === 'Latin');
  // Words: runs of letters and their combining marks (`dеploy` of `sh dеploy.sh`).
  for (let i = 0; i < chars.length;) {
    if (!/^\p{L}$/u.test(chars[i]!)) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < chars.length && /^[\p{L}\p{M}]$/u.test(chars[end]!)) end++;
    const scripts = new Map<LookalikeScript, number>();
    for (let k = i; k < end; k++) {
      const script = scriptOf(chars[k]!);
      if (script && !scripts.has(script)) scripts.set(script, k);
    }
    if (scripts.size > 1) {
      const [script, k] = [...scripts].find(([x]) => x !== 'Latin')!;
      const others = [...scripts.keys()].filter((x) => x !== script);
      return at(k, `a ${script} letter in a word of ${others.join(' and ')} letters`);
    }
    const [only] = scripts.keys();
    if (hasLatin && only && only !== 'Latin') {
      const letters = chars.slice(i, end).filter((ch) => /^\p{L}$/u.test(ch));
      if (letters.every(looksLatin)) return at(i, `in a word of ${only} letters that all look Latin`);
    }
    i = end;
  }
  return undefined;
}

/**
 * Why command text (a command, or a pattern of the policy) does not read as what it matches, or
 * undefined: the one rule (line breaks and tabs allowed, as in a script), then lookalikes.
 */
export function commandTextProblem(s: string): string | undefined {
  return textProblem(s, { multiLine: true }) ?? confusableProblem(s);
}
