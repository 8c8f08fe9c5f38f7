/**
 * The control plane's public surface. Importing it registers every capability (the contract and
 * exec modules add theirs), so adapters import from here and never from a single module.
 */
export * from './errors';
export * from './ids';
export * from './text-rules';
export * from './model';
export * from './policy-model';
export * from './events';
export * from './store';
// What store.ts exported before its parts moved out; the rest of those modules is internal.
export { LOOPX_DIR } from './workspace';
export { IndexEntry, indexEntryOf, indexJournal } from './goal-index';
export type { LoadedGoal } from './goal-load';
export { SNAPSHOT_EVERY } from './snapshot';
export { parseLog, type ParsedLog } from './event-log';
export { LEGACY_LOG } from './goal-logs';
export { signFirstPolicy, writeAndSignPolicy } from './workspace-policy';
export { allowedCommand, allowRulesOf, withAllowedCommand } from './allow-commands';
export { DEFAULT_PRICES, priceOf, costOf } from './prices';
export * from './goal-history';
export * from './apply-event';
export * from './capabilities';
export * from './gate-rules';
export * from './gate-facts';
export * from './quota';
export * from './contract';
export * from './exec';
export * from './identity';
export * from './status';
export * from './status-doc';
export * from './denials';
export * from './summary';
export * from './turn';
export * from './repair';
export * from './trust/keys';
export * from './trust/decisions';
export * from './trust/terminal-key';
export * from './trust/policy-signature';
export * from './text-diff';
export * from './config-dir';
export * from './agent-tools';
export * from './hooks';
export * from './file-stamp';
export * from './records-doc';
export * from './records';
export * from './goal-export';
export * from './doctor';
export * from './markdown-text';
export * from './workflows/index';
export * from './next-commands';
