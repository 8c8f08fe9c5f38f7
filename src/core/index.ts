/**
 * The control plane's public surface. Importing it registers every capability (the contract and
 * exec modules add theirs), so adapters import from here and never from a single module.
 */
export * from './model/errors';
export * from './model/ids';
export * from './model/text-rules';
export * from './model/goal-state';
export * from './model/policy';
export * from './model/events';
export * from './store/store';
// What store/store.ts exported before its parts moved out; the rest of those modules is internal.
export { LOOPX_DIR } from './store/workspace';
export { IndexEntry, indexEntryOf, indexJournal } from './store/goal-index';
export type { LoadedGoal } from './store/goal-load';
export { SNAPSHOT_EVERY } from './store/snapshot';
export { parseLog, type ParsedLog } from './store/event-log';
export { LEGACY_LOG } from './store/goal-logs';
export { signFirstPolicy, writeAndSignPolicy } from './trust/workspace-policy';
export { allowedCommand, allowRulesOf, withAllowedCommand } from './shell/allow-commands';
export { DEFAULT_PRICES, priceOf, costOf } from './rules/prices';
export * from './views/goal-history';
export * from './rules/apply-event';
export * from './capabilities/registry';
export * from './rules/gate-rules';
export * from './views/gate-facts';
export * from './rules/quota-math';
export * from './contract/issue';
export * from './contract/exec';
export * from './trust/identity';
export * from './views/status';
export * from './views/status-doc';
export * from './views/denials-doc';
export * from './contract/summary';
export * from './contract/turn';
export * from './setup/repair';
export * from './trust/keys';
export * from './trust/signed-decisions';
export * from './trust/terminal-key';
export * from './trust/policy-signature';
export * from './views/text-diff';
export * from './store/config-dir';
export * from './agent-tools/tools';
export * from './hooks/run-hook';
export * from './store/file-stamp';
export * from './views/records-doc';
export * from './views/records';
export * from './views/goal-export';
export * from './setup/doctor';
export * from './views/markdown-text';
export * from './workflows/index';
export * from './views/next-commands';
