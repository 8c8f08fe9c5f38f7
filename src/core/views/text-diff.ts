/** A line diff for people to read before they sign (policy files: small, so plain LCS will do). */

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** The lines of `a` and `b` as kept (' '), removed ('-') and added ('+'), in order. */
export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  // lcs[i][j]: length of the longest common subsequence of x[i..] and y[j..].
  const lcs = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      out.push({ op: ' ', text: x[i++]! });
      j++;
    } else if (i < x.length && (j === y.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!))
      out.push({ op: '-', text: x[i++]! });
    else out.push({ op: '+', text: y[j++]! });
  }
  return out;
}

/** `lineDiff` as text, `-`/`+` marked, with `context` unchanged lines around each change. */
export function formatDiff(lines: readonly DiffLine[], context = 2): string {
  const near = lines.map((_, k) =>
    lines.slice(Math.max(0, k - context), k + context + 1).some((l) => l.op !== ' '),
  );
  const out: string[] = [];
  let skipped = false;
  lines.forEach((l, k) => {
    if (!near[k]) return void (skipped = true);
    if (skipped) out.push('  …');
    skipped = false;
    out.push(`${l.op} ${l.text}`);
  });
  if (skipped) out.push('  …');
  return out.join('\n');
}
