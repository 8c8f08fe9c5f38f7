/**
 * What `loopx hook pre-tool-use` answered, read as a host reads it: exit 2 with `deny` blocks the
 * tool, exit 0 with `allow` runs it without the host's prompt, exit 0 with no decision leaves it
 * to the host's own rules.
 */
import assert from 'node:assert/strict';
import type { Result } from './cli';
import { show } from './cli';

/** The `permissionDecision` the hook printed, if any. */
export const decisionOf = (r: Result) =>
  (JSON.parse(r.stdout || '{}') as { hookSpecificOutput?: { permissionDecision?: string } })
    .hookSpecificOutput?.permissionDecision;

export function denied(r: Result, reason?: RegExp): void {
  assert.equal(r.code, 2, show(r));
  assert.equal(decisionOf(r), 'deny', show(r));
  if (reason) assert.match(r.stderr, reason, show(r));
}

/** No decision: the tool goes on to the host's own rules and permission prompt. */
export function leftToHost(r: Result): void {
  assert.equal(r.code, 0, show(r));
  assert.equal(decisionOf(r), undefined, `the hook decided for the host:\n${show(r)}`);
}

export function allowed(r: Result): void {
  assert.equal(r.code, 0, show(r));
  assert.equal(decisionOf(r), 'allow', show(r));
}
