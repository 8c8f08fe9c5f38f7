/**
 * Pure rules, no I/O: applying events to a goal's state, settling what clones did apart, which
 * gates a todo needs, quota arithmetic, token prices and the should-run decision.
 */
export * from './apply-event';
export * from './gate-rules';
export * from './merge-order';
export * from './merged-replay';
export * from './prices';
export * from './quota-math';
export * from './recurrence';
export * from './recurring-todos';
export * from './should-run-decision';
