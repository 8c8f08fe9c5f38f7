/**
 * The dashboard's controls outside VS Code. A browser page cannot approve a gate or open the
 * editor, so each control that would post a message becomes a `vscode://` link to the
 * extension's URI handler (which asks the person there, as the webview's message would) and the
 * CLI command that does the same from a terminal. The extension turns the link back into the
 * message with `parseDashboardLink`, which accepts exactly what `parseWebviewMessage` accepts.
 *
 * The webview bundles this module: no node imports.
 */
import { shellQuote } from '../shell';
import type { Msg } from './dashboard-protocol';
import { parseWebviewMessage } from './dashboard-protocol';
import { gateDecisionCommand } from './next-commands';

/** The extension's URI authority: `<publisher>.<name>` of package.json. */
export const DASHBOARD_LINK_AUTHORITY = 'loopx.loopx-vscode';
export const DASHBOARD_LINK_PREFIX = `vscode://${DASHBOARD_LINK_AUTHORITY}/dashboard/`;

/** The fields a link may carry, in the order they are written. */
const FIELDS = ['goalId', 'gateId', 'evidenceId', 'folder'] as const;

/**
 * `vscode://loopx.loopx-vscode/dashboard/<type>?goalId=..&gateId=..&evidenceId=..&folder=..`.
 * Throws for a message `parseWebviewMessage` would refuse: no link is ever built from bad ids.
 */
export function vscodeLinkFor(msg: Msg): string {
  const checked = parseWebviewMessage(msg);
  if (!checked) throw new Error(`not a dashboard message: ${JSON.stringify(msg).slice(0, 200)}`);
  const q = new URLSearchParams();
  const fields = checked as Partial<Record<(typeof FIELDS)[number], string>>;
  for (const k of FIELDS) {
    const v = fields[k];
    if (v !== undefined) q.set(k, v);
  }
  const query = q.toString();
  return `${DASHBOARD_LINK_PREFIX}${checked.type}${query ? `?${query}` : ''}`;
}

/**
 * The link's path (`/dashboard/<type>`) and query back into the message, or undefined when
 * anything is off: another path, a repeated or unknown parameter, an id outside the Id rule.
 */
export function parseDashboardLink(path: string, query: URLSearchParams): Msg | undefined {
  const m = /^\/dashboard\/([a-z][a-z-]{0,31})$/.exec(path);
  if (!m) return undefined;
  const raw: Record<string, string> = { type: m[1]! };
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    // Only the fields a link writes: `__proto__` and friends never reach the object.
    if (all.length !== 1 || !(FIELDS as readonly string[]).includes(key)) return undefined;
    raw[key] = all[0]!;
  }
  return parseWebviewMessage(raw);
}

/**
 * The terminal's way to do what the message asks, for a person to copy; undefined for `ready`.
 * With a folder (several workspace folders) the command names it with `--workspace`.
 */
export function cliCommandFor(msg: Msg): string | undefined {
  const m = parseWebviewMessage(msg);
  if (!m || m.type === 'ready') return undefined;
  const ws = m.folder ? ` --workspace ${shellQuote(m.folder)}` : '';
  if (m.type === 'open-workspace')
    return `loopx${ws} status${m.goalId ? ` --goal-id ${shellQuote(m.goalId)}` : ''}`;
  const goal = `--goal-id ${shellQuote(m.goalId)}`;
  switch (m.type) {
    case 'approve-gate':
      return gateDecisionCommand('approve', m.goalId, m.gateId, m.folder);
    case 'reject-gate':
      return gateDecisionCommand('reject', m.goalId, m.gateId, m.folder);
    case 'open-evidence':
      return `loopx${ws} evidence list ${goal}`;
    case 'select-goal':
    case 'reveal-goal':
      return `loopx${ws} goal show ${goal}`;
  }
}
