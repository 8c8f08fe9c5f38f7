/** This LoopX's version, set by the build (scripts/build/build.mjs); a development run says so. */
declare const LOOPX_VERSION: string;
export const VERSION = typeof LOOPX_VERSION === 'string' ? LOOPX_VERSION : '0.0.0-dev';
