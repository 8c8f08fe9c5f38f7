/** Types of own-config-dir.mjs (plain JS, shared by scripts/test/run-suite.mjs and bench/stores.ts). */
export function ownConfigDir(prefix?: string): { env: NodeJS.ProcessEnv; cleanup: () => void };
