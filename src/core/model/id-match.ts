/**
 * Which id a person meant when the one they typed names nothing: goal ids end in a random suffix
 * (`refactor-payment-module-gs06`) that nobody remembers, so a unique prefix stands for the id and
 * anything else is answered with the ids it is close to.
 */

/** A prefix shorter than this never stands for an id: `r` matching one goal today is luck. */
export const MIN_PREFIX = 3;
const MAX_NEAR = 5;

export type IdMatch =
  | { kind: 'exact'; id: string }
  /** The only id that starts with what was typed. */
  | { kind: 'prefix'; id: string }
  /** Several ids start with it: each is listed, none chosen. */
  | { kind: 'ambiguous'; ids: string[] }
  /** Nothing starts with it: the ids it is close to, nearest first (maybe none). */
  | { kind: 'none'; near: string[] };

export function matchId(given: string, ids: readonly string[]): IdMatch {
  if (ids.includes(given)) return { kind: 'exact', id: given };
  if (given.length >= MIN_PREFIX) {
    const starts = ids.filter((id) => id.startsWith(given));
    if (starts.length === 1) return { kind: 'prefix', id: starts[0]! };
    if (starts.length > 1) return { kind: 'ambiguous', ids: [...starts].sort() };
  }
  const typed = given.toLowerCase();
  const limit = Math.max(2, Math.floor(typed.length / 3));
  const near = ids
    .map((id) => {
      const lower = id.toLowerCase();
      // Against the whole id and against it without its random suffix, whichever is closer.
      const stem = lower.replace(/-[0-9a-z]{4}$/, '');
      return { id, d: Math.min(editDistance(typed, lower), editDistance(typed, stem)) };
    })
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : 1))
    .slice(0, MAX_NEAR)
    .map((x) => x.id);
  return { kind: 'none', near };
}

/** Levenshtein distance; ids are at most 64 characters, so two rows suffice. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

/** How an error lists ids: `a, b or c`, at most `MAX_NEAR` of them. */
export function idChoices(ids: readonly string[]): string {
  const shown = ids.slice(0, MAX_NEAR);
  const more = ids.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more} more`;
  return shown.length > 1 ? `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}` : (shown[0] ?? '');
}
