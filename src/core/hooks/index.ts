/**
 * `loopx hook <event>`: the agent-host hooks (PreToolUse, Stop, ...), their install and shim.
 */
export * from './install';
export * from './session-events';
export * from './shim';
