/**
 * Every state change, as one capability: the one list of them (list.ts), the registry built from
 * it, and `invoke`, the one way adapters change state.
 */
export { GOAL_TRANSITIONS } from './goals';
export type { GoalTransition } from './goals';
export { allCapabilities } from './list';
export * from './registry';
export * from './shared';
export * from './todos';
export * from './types';
