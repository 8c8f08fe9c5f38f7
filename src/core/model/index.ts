/**
 * The vocabulary of the control plane: the goal model, events and policy as zod schemas, ids,
 * the one rule for text, clock stamps and the typed errors. Depends on nothing but zod, so the
 * webview (a browser) can load it.
 */
export * from './errors';
export * from './events';
export * from './goal-state';
export * from './hlc';
export * from './id-match';
export * from './ids';
export * from './lazy';
export * from './order';
export * from './policy';
export * from './recurrence';
export * from './text-rules';
export * from './version';
