/**
 * The shell lexer: a command's words, operators and redirections as sh, dash, bash and zsh would
 * read them, or undefined when the text holds anything beyond plain words (an expansion, a
 * substitution, a glob, a brace, a comment, an unterminated quote, ...). Conservative by design:
 * what it cannot read, the policy treats as matching every pattern (shell/command-reader.ts).
 *
 * `shellWords` is the one word splitter of LoopX: the PreToolUse hook reads `loopx ...` commands
 * with it. Pure: no I/O.
 */

export interface WordTok {
  t: 'word';
  text: string;
  /** Some of it was quoted or escaped (so digits before `>` are an argument, not a descriptor). */
  quoted: boolean;
  start: number;
  end: number;
}
export interface OpTok {
  t: 'op' | 'redir';
  op: string;
  start: number;
  end: number;
}
export type Tok = WordTok | OpTok;

/** Unquoted, these make a shell expand, glob, group or comment: the text is not plain words. */
const NOT_PLAIN = new Set([...'$`(){}*?[]!~^#']);
/** Escapable inside double quotes (POSIX); any other backslash there is literal. */
const DQ_ESCAPABLE = new Set(['$', '`', '"', '\\', '\n']);
const isControl = (c: string) => {
  const n = c.charCodeAt(0);
  return (n < 0x20 && c !== '\t' && c !== '\n') || n === 0x7f;
};

/** The tokens of a command, or undefined when any of it is not plain shell words and operators. */
export function lex(src: string): Tok[] | undefined {
  if (src.includes('\0')) return undefined;
  const toks: Tok[] = [];
  let cur = '';
  let inWord = false;
  let quoted = false;
  let start = 0;
  const begin = (i: number) => {
    if (!inWord) {
      inWord = true;
      start = i;
    }
  };
  const endWord = (i: number) => {
    if (inWord) toks.push({ t: 'word', text: cur, quoted, start, end: i });
    cur = '';
    inWord = false;
    quoted = false;
  };
  const push = (t: 'op' | 'redir', op: string, s: number, e: number) =>
    toks.push({ t, op, start: s, end: e });
  for (let i = 0; i < src.length;) {
    const c = src[i]!;
    if (c === ' ' || c === '\t') {
      endWord(i);
      i++;
    } else if (c === '\n') {
      endWord(i);
      push('op', '\n', i, i + 1);
      i++;
    } else if (c === '\\') {
      if (i + 1 >= src.length) return undefined;
      if (src[i + 1] === '\n') {
        i += 2; // a line continuation: nothing
        continue;
      }
      begin(i);
      cur += src[i + 1];
      quoted = true;
      i += 2;
    } else if (c === "'") {
      const end = src.indexOf("'", i + 1);
      if (end === -1) return undefined;
      begin(i);
      cur += src.slice(i + 1, end);
      quoted = true;
      i = end + 1;
    } else if (c === '"') {
      begin(i);
      quoted = true;
      let j = i + 1;
      for (;;) {
        if (j >= src.length) return undefined;
        const d = src[j]!;
        if (d === '"') break;
        // Expansions inside double quotes; `!` is history expansion in an interactive shell.
        if (d === '$' || d === '`' || d === '!') return undefined;
        if (d === '\\' && j + 1 < src.length && DQ_ESCAPABLE.has(src[j + 1]!)) {
          if (src[j + 1] !== '\n') cur += src[j + 1];
          j += 2;
        } else {
          cur += d;
          j++;
        }
      }
      i = j + 1;
    } else if (c === ';' || c === '&' || c === '|') {
      endWord(i);
      const two = src.slice(i, i + 2);
      if (two === ';;' || two === ';&') return undefined; // `case` syntax
      if (two === '&>') {
        const op = src.slice(i, i + 3) === '&>>' ? '&>>' : '&>';
        push('redir', op, i, i + op.length);
        i += op.length;
      } else if (two === '&&' || two === '||' || two === '|&') {
        push('op', two, i, i + 2);
        i += 2;
      } else {
        push('op', c, i, i + 1);
        i++;
      }
    } else if (c === '<' || c === '>') {
      const two = src.slice(i, i + 2);
      // A heredoc or here-string (`<<`, `<<<`) and process substitution (`<(`, `>(`).
      if (two === '<<' || two === '<(' || two === '>(') return undefined;
      // Digits right before it, unquoted, name the descriptor (`2>&1`): part of the redirection.
      let s = i;
      let fd = '';
      if (inWord && !quoted && /^\d+$/.test(cur)) {
        s = start;
        fd = cur;
        cur = '';
        inWord = false;
      } else endWord(i);
      const op = ['>>', '>&', '>|', '<&', '<>'].includes(two) ? two : c;
      push('redir', fd + op, s, i + op.length);
      i += op.length;
    } else if (NOT_PLAIN.has(c) || isControl(c) || (c === '=' && !inWord)) {
      // `=cmd` at the start of a word is the path of cmd in zsh.
      return undefined;
    } else {
      begin(i);
      cur += c;
      i++;
    }
  }
  endWord(src.length);
  return toks;
}

/**
 * A command's words by the shell's quoting rules ('single', "double" with its backslash escapes,
 * backslash escapes), when it is nothing but plain words: no operator, redirection, expansion,
 * substitution, glob, brace, comment or unterminated quote. Else undefined. No word is
 * interpreted: `env git push` is three words here (see `commandWords` for what runs).
 */
export function shellWords(command: string): string[] | undefined {
  const toks = lex(command);
  if (!toks || toks.some((t) => t.t !== 'word')) return undefined;
  return toks.map((t) => (t as WordTok).text);
}
