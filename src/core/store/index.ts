/**
 * `.loopx/` on disk: per-writer hash-chained logs, the write protocol (lock, plan, append, fsync,
 * snapshot) with group commit inside it, caches, locks and the user's config folder.
 */
export * from './config-dir';
export * from './event-log';
export * from './file-stamp';
export * from './goal-index';
export * from './goal-load';
export * from './goal-logs';
export * from './json-file';
export * from './json-locate';
export * from './local-dir';
export * from './lock';
export * from './prepared-event';
export * from './safe-path';
export * from './sleep';
export * from './snapshot';
export * from './store';
export * from './workspace';
export * from './workspace-identity';
export * from './workspace-registry';
export * from './writers';
