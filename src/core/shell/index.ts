/**
 * Reading shell commands as a shell does, for the policy's patterns; quoting for one.
 * Pure and browser-safe.
 */
export * from './allow-commands';
export * from './command-reader';
export * from './lexer';
export * from './pattern';
export * from './quote';
