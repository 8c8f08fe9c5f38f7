/**
 * What a person is told about a `.loopx/policy.json` that cannot be read, said once for every
 * surface: `loopx status` and `loopx doctor` (text and --json), the dashboard's notice (the status
 * document's `policy.message`) and the Goals tree's row, which opens the file at the error.
 */
import * as path from 'node:path';
import type { LoopxError } from '../model';
import { errorReport } from '../model';
import type { Store } from '../store';
import type { PolicyStatus } from './status-doc';

/** The status of a policy.json that does not parse: what is wrong, what it stops, the fix. */
export type InvalidPolicyStatus = PolicyStatus & { state: 'invalid'; fix: string };

/**
 * `e` is why `store.policyView()` refused (the file's path, and the line when the JSON breaks).
 * Until it is fixed no agent gets a contract, so the message says that before the fix.
 */
export function invalidPolicyStatus(
  store: Pick<Store, 'workspace' | 'policyPath'>,
  e: LoopxError,
): InvalidPolicyStatus {
  const r = errorReport(e);
  const fix = `fix ${path.relative(store.workspace, store.policyPath) || store.policyPath} by hand, then check it with \`loopx policy show\``;
  return {
    state: 'invalid',
    unsigned_changes: [],
    message: `${e.message}. Until it is fixed no agent gets a contract (quota should-run, todo add refuse): ${fix}`,
    error: {
      kind: r.kind,
      reason: r.reason,
      message: r.message,
      ...(typeof r.file === 'string' ? { file: r.file } : {}),
      ...(typeof r.line === 'number' ? { line: r.line } : {}),
      ...(typeof r.field === 'string' ? { field: r.field } : {}),
    },
    fix,
  };
}

/**
 * What is wrong, without the file's path the error starts with: `not valid JSON: Unexpected end
 * of JSON input`, `defaultQuota.budgets.turns: Invalid input`.
 */
export function policyProblem(status: InvalidPolicyStatus): string {
  const message = status.error?.message ?? status.message ?? '';
  const file = status.error?.file;
  if (!file || !message.startsWith(file)) return message;
  return message
    .slice(file.length)
    .replace(/^ \(line \d+\)/, '')
    .replace(/^:\s*/, '');
}
