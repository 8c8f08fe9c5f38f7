/**
 * The control plane's public surface for the adapters (CLI, servers, extension): every subsystem's
 * own surface. docs/ARCHITECTURE.md says what each subsystem is for.
 */
export * from './agent-tools';
export * from './capabilities';
export * from './contract';
export * from './drive';
export * from './hooks';
export * from './model';
export * from './reach';
export * from './rules';
export * from './setup';
export * from './shell';
export * from './store';
export * from './trust';
export * from './views';
export * from './workflows';
