/** POSIX shell quoting, in a module of its own so the dashboard webview can bundle it (no node imports). */

/** Quotes a string for a POSIX shell: the executor `eval`s our commands as they are. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
