/**
 * Which `loopx` commands the hook lets an agent run without a contract, by the command path the
 * CLI's parser gives: those that only read, and the agent's own turn; and which are a person's
 * decisions, never an agent's.
 */
import type { LoopxArgs } from './answer';

/** Read-only `loopx` commands, by the command path the CLI's parser gives. */
const READ_ONLY_LOOPX: readonly (readonly string[])[] = [
  ['status'],
  ['log'],
  ['verify'],
  ['capabilities'],
  ['capability', 'show'],
  ['capability', 'schema'],
  ['project_prompt', 'list'],
  ['project_prompt', 'show'],
  ['goal', 'list'],
  ['goal', 'show'],
  ['todo', 'list'],
  ['todo', 'show'],
  ['gate', 'list'],
  ['gate', 'show'],
  ['run', 'list'],
  ['run', 'show'],
  ['evidence', 'list'],
  ['reward', 'list'],
  ['completion'],
  ['doctor'],
  ['quota', 'show'],
  ['contract', 'verify'],
  ['workspaces'],
  ['notify', 'list'],
];
/** A person's decisions, and making or trusting the keys that sign them. */
export const HUMAN_ONLY_LOOPX: readonly (readonly string[])[] = [
  ['gate', 'approve'],
  ['gate', 'reject'],
  ['reward', 'add'],
  ['quota', 'grant'],
  ['policy', 'sign'],
  ['policy', 'allow'],
  ['approvers', 'trust'],
  ['key', 'create'],
  ['key', 'passkey', 'add'],
  // Where the person is told, and which workspaces their queue shows: theirs to set, in the
  // config folder an agent's hooks keep it out of.
  ['notify', 'add'],
  ['notify', 'remove'],
  ['notify', 'desktop'],
  ['notify', 'link-base'],
  ['workspaces', 'forget'],
];
export const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

export type LoopxRun = Extract<LoopxArgs, { kind: 'run' }>;

/**
 * Read-only: the list above, a `quota should-run --preview` (which opens nothing), an `export`
 * to standard output (with `--output` it writes a file), and `log` without `--follow` (see
 * `endless`).
 */
export function readOnly(p: LoopxRun): boolean {
  if (same(p.command, ['quota', 'should-run'])) return p.options.preview === true;
  if (same(p.command, ['export'])) return p.options.output === undefined;
  if (same(p.command, ['log'])) return p.options.follow !== true;
  return READ_ONLY_LOOPX.some((r) => same(r, p.command));
}

/**
 * Commands that write, but only the agent's own turn: `quota should-run` opens (or returns) its
 * run with a contract for the policy's lifetime, `summary_all` ends its runs (with `--contract`,
 * a contract's `finish_with`, it is judged in loopxCommand), and `turn` does both around the
 * contract's commands, each checked against the contract by exec itself. Allowed in the agent's
 * own name only (`--agent` left out, or naming `self`); never in another's (that would open or
 * end another agent's run), nor with a longer `--ttl-minutes`.
 */
export function ownTurn(p: LoopxRun, self: string): boolean {
  const agent = p.options.agent;
  const own = agent === undefined || agent === self;
  if (same(p.command, ['quota', 'should-run']) || same(p.command, ['turn']))
    return own && p.options.ttlMinutes === undefined;
  if (same(p.command, ['summary_all'])) return own;
  return false;
}
