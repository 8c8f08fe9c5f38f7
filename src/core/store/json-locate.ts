/**
 * Where things are in a JSON file, for a person fixing it by hand: the line and column of a
 * syntax error, and of each field (`todos.1.dependsOn.0`), so that a schema error names the
 * line of the field it is about. JSON.parse says neither.
 */

export interface Place {
  line: number;
  column: number;
}

/** Line and column (1-based) of a character offset. */
export function placeOf(text: string, offset: number): Place {
  const before = text.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

/** The character offset where JSON.parse stopped, when its message says it. */
export function syntaxErrorOffset(err: unknown): number | undefined {
  const m = /position (\d+)/.exec(String((err as Error).message));
  return m ? Number(m[1]) : undefined;
}

/** Where JSON.parse stopped, when its message says the position (else the end of the text). */
export function syntaxErrorPlace(text: string, err: unknown): Place {
  return placeOf(text, syntaxErrorOffset(err) ?? text.length);
}

/**
 * The place of every field of a valid JSON text, by its path joined with dots (`''` for the
 * root): an object member's place is its key's, an array element's its value's.
 */
export function fieldPlaces(text: string): Map<string, Place> {
  const out = new Map<string, Place>();
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const at = placeOf(text, i);
        const key = str();
        const sub = path ? `${path}.${key}` : key;
        if (!out.has(sub)) out.set(sub, at);
        ws();
        i++; // ':'
        value(sub);
        ws();
        if (text[i++] === '}') return;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        ws();
        const sub = path ? `${path}.${n}` : String(n);
        out.set(sub, placeOf(text, i));
        value(sub);
        ws();
        if (text[i++] === ']') return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
  };
  out.set('', placeOf(text, 0));
  value('');
  return out;
}

/** The place of `path`, or of the nearest field above it that the text has. */
export function placeOfField(places: Map<string, Place>, path: readonly (string | number)[]): Place {
  for (let n = path.length; n >= 0; n--) {
    const p = places.get(path.slice(0, n).map(String).join('.'));
    if (p) return p;
  }
  return { line: 1, column: 1 };
}
