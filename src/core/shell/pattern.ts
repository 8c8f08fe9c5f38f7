/** Policy patterns: `*` matches any run of characters; everything else, spaces included, is literal. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${body}$`);
}

export function matchesGlob(pattern: string, text: string): boolean {
  return globToRegExp(pattern).test(text);
}
