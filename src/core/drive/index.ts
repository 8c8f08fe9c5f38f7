/**
 * The executor: `loopx drive` keeps lanes going. A lane is one runtime (declared in the signed
 * policy) working on one goal under its own agent identity, in its own git worktree if its
 * runtime asks for one; it sleeps until something that can change its contract's answer happens.
 */
export * from './driver';
export * from './drive-status';
export * from './lane-runner';
export * from './lane-step';
export * from './lanes';
export * from './runtime';
export * from './service';
export * from './turn-end';
export * from './turn-process';
export * from './wake';
export * from './worktree';
