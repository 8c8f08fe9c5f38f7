/**
 * Orders strings by their UTF-16 code units, as `<` does. What LoopX sorts (ids, ISO timestamps,
 * workflow names) is ASCII of one case, where this is the natural order; and unlike
 * `localeCompare` it needs no Intl collator, whose first use costs a `loopx` call several ms.
 */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
