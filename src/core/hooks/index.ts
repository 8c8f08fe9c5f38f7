/**
 * `loopx hook <event>`: the agent-host hooks (PreToolUse, Stop, ...), their install and shim.
 */
export * from './install';
export * from './run-hook';
export * from './shim';
