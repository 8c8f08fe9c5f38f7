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

/**
 * A Claude Code PreToolUse payload, as the host writes it on the hook's stdin (`session`: the
 * session id it names; `mode`: its permission mode).
 */
export function preToolUsePayload(
  cwd: string,
  tool_name: string,
  tool_input: unknown,
  o: { session: string; mode?: string; toolUseId?: string },
) {
  return {
    session_id: o.session,
    transcript_path: `/home/dev/.claude/projects/-work-app/${o.session}.jsonl`,
    cwd,
    permission_mode: o.mode ?? 'default',
    hook_event_name: 'PreToolUse',
    tool_name,
    tool_input,
    tool_use_id: o.toolUseId ?? 'toolu_01SecTest',
  };
}
