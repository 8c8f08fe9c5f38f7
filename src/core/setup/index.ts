/**
 * Setting a machine up and keeping a store sound: `loopx doctor`, self-repair and the `loopx` shim.
 */
export * from './cli-shim';
export * from './doctor';
export * from './repair';
export * from './shim-target';
