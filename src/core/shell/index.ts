/**
 * Reading shell commands as a shell does, for the policy's patterns; quoting for one.
 * Pure and browser-safe: where the allow list reads the disk (path-reach.ts), the caller gives it.
 */
export * from './allow-commands';
export * from './command-reader';
export * from './lexer';
export * from './path-reach';
export * from './pattern';
export * from './quote';
