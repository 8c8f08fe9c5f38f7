/**
 * What model tokens cost, for the spend the Stop hook captures from a host's transcript. The
 * policy's `prices` (model globs) come first, then this table; a model neither names is priced as
 * the dearest entry of the table, so that a cost budget never counts a new model as free.
 *
 * USD per million tokens, list prices as their vendors published them (late 2026). A cache write
 * costs 1.25x input and a cache read 0.1x input unless the entry says otherwise.
 */
import type { ModelPrice, Policy, TokenUsage } from '../model';
import { matchesGlob } from '../shell';
import { round6 } from './quota-math';

export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'claude-opus-4-1*': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4-0*': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-4-2*': { inputPerMTok: 15, outputPerMTok: 75 },
  'claude-opus-*': { inputPerMTok: 5, outputPerMTok: 25 },
  'claude-sonnet-*': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-haiku-*': { inputPerMTok: 1, outputPerMTok: 5 },
  'claude-3-5-haiku*': { inputPerMTok: 0.8, outputPerMTok: 4 },
  'gpt-5*-mini*': { inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025 },
  'gpt-5*': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  'gpt-4.1*': { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  'o3*': { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  'o4-mini*': { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275 },
};

/** The dearest entry, for a model no price names. */
const FALLBACK: ModelPrice = Object.values(DEFAULT_PRICES).reduce((a, b) =>
  b.inputPerMTok + b.outputPerMTok > a.inputPerMTok + a.outputPerMTok ? b : a,
);

export interface PriceFound {
  price: ModelPrice;
  /** The glob that priced it, or undefined when the fallback did. */
  pattern?: string;
  from: 'policy' | 'default' | 'fallback';
}

export function priceOf(model: string, policy: Pick<Policy, 'prices'>): PriceFound {
  for (const [from, table] of [
    ['policy', policy.prices ?? {}],
    ['default', DEFAULT_PRICES],
  ] as const) {
    const pattern = Object.keys(table).find((p) => matchesGlob(p, model));
    if (pattern !== undefined) return { price: table[pattern]!, pattern, from };
  }
  return { price: FALLBACK, from: 'fallback' };
}

/** The cost of `usage` at `price`, in USD (rounded to a millionth of a dollar). */
export function costOf(usage: TokenUsage, price: ModelPrice): number {
  const perToken = (perM: number) => perM / 1e6;
  const usd =
    usage.input * perToken(price.inputPerMTok) +
    usage.output * perToken(price.outputPerMTok) +
    usage.cacheWrite * perToken(price.cacheWritePerMTok ?? price.inputPerMTok * 1.25) +
    usage.cacheRead * perToken(price.cacheReadPerMTok ?? price.inputPerMTok * 0.1);
  return round6(usd);
}

/** All tokens of a usage: what a token budget counts (cache reads and writes are tokens the model read). */
export const totalTokens = (u: TokenUsage) => u.input + u.output + u.cacheWrite + u.cacheRead;
