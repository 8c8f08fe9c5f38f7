/**
 * The dashboard's message protocol: what the extension posts to the webview and the only
 * messages the webview may send back. The webview imports this module, so it depends on nothing
 * but zod, the model's `Id`, the text rules and types (no node imports).
 *
 * The webview is read-only by construction: it may say `ready` and ask to navigate (select a
 * goal, reveal it in the tree, open evidence, go to the extension's own approve/reject command,
 * which asks the person there). Anything else fails `parseWebviewMessage` and is dropped.
 */
import { z } from 'zod';
import { Id, lazy, textProblem } from '../model';
import type { EverywhereSection } from './everywhere';
import type { AttentionItem, GoalStatusDoc, StatusDoc } from './status-doc';

// ---------------------------------------------------------------------------------------------
// Extension -> webview

/** An attention item with the workspace folder (an absolute path) its goal lives in. */
export type AttentionEntry = AttentionItem & { folder?: string };

/** One workspace folder's slice of a merged overview: `goals` consecutive entries of `doc.goals`. */
export interface FolderSlice {
  path: string;
  name: string;
  goals: number;
}

/** How a lane reads at a glance: the colour of its dot and, in the tree, its icon. */
export type LaneTone = 'working' | 'asleep' | 'needs' | 'stopped' | 'done' | 'idle' | 'off';

/**
 * One lane of `loopx drive` as the dashboard's Agents section lists it: text made on the
 * extension's side (core/views/lane-text.ts), the same words as the tree's row and its tooltip.
 */
export interface AgentRow {
  name: string;
  /** The folder's name, when the window has several. */
  folder?: string;
  goal_id: string;
  /** The goal's title (its id when it cannot be read). */
  goal: string;
  runtime: string;
  /** The lane's branch, when its runtime works in a worktree of its own. */
  branch?: string;
  /** Its state in a word or two (`working`, `asleep · 10:42`, `needs you`). */
  state: string;
  tone: LaneTone;
  /** Why it is in that state, whole. */
  why?: string;
  /** The last turn: its outcome and when (`succeeded 2 min ago`). */
  last?: string;
  /** What its runs spent on the goal: `3 turns · 1200 tokens · $0.01`. */
  spend: string;
}

/** The dashboard's Agents section: whether a driver keeps the lanes going, and the lanes. */
export interface AgentsSection {
  /** Who drives them: `running in this window`, `loopx drive runs them (process 4242)`, `not running`. */
  driver: string;
  rows: AgentRow[];
}

export interface StatusMessage {
  type: 'status';
  /** The overview (merged over the workspace folders, in folder order). */
  doc: StatusDoc;
  /**
   * The attention queue with item ids a person can act on (gate ids, todo ids, budget names),
   * read from the goals themselves. When absent the webview falls back to `doc.attention`.
   */
  attention?: AttentionEntry[];
  /** Which folder each goal of `doc.goals` belongs to. Absent: one folder, nothing to tell. */
  folders?: FolderSlice[];
  /** The lanes of `loopx drive`, when any folder has some (the browser's page has none). */
  agents?: AgentsSection;
  /** What needs the person in every workspace on the machine, when there are others (views/everywhere.ts). */
  everywhere?: EverywhereSection;
}

export interface GoalMessage {
  type: 'goal';
  doc: GoalStatusDoc;
  folder?: string;
}

export interface ErrorMessage {
  type: 'error';
  message: string;
}

export type HostMessage = StatusMessage | GoalMessage | ErrorMessage;

/** Attention kinds in the order a person should read them. */
export const ATTENTION_ORDER: readonly AttentionItem['kind'][] = [
  'gate',
  'user-todo',
  'denied',
  'quota',
  'plan',
];

/** One folder's policy report; with several folders, the first that has something to say, named. */
function mergedPolicy(parts: readonly { name: string; doc: StatusDoc }[]): StatusDoc['policy'] {
  const telling = parts.find((p) => p.doc.policy?.message);
  if (!telling) return parts[0]?.doc.policy ?? { state: 'not_signed', unsigned_changes: [] };
  const p = telling.doc.policy;
  return parts.length > 1 ? { ...p, message: `${telling.name}: ${p.message}` } : p;
}

/**
 * Merges per-folder overviews into one status message (pure: the extension and the tests build
 * the message the same way). `attention` per folder, when given, replaces the index-level one.
 */
export function statusMessage(
  parts: readonly { path: string; name: string; doc: StatusDoc; attention?: AttentionItem[] }[],
  generatedAt = new Date().toISOString(),
): StatusMessage {
  const counts: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.doc.counts)) counts[k] = (counts[k] ?? 0) + v;
  const detailed = parts.every((p) => p.attention);
  const rank = (k: AttentionItem['kind']) => ATTENTION_ORDER.indexOf(k);
  const attention: AttentionEntry[] = parts
    .flatMap((p) =>
      (p.attention ?? p.doc.attention).map((a) => (parts.length > 1 ? { ...a, folder: p.path } : a)),
    )
    .map((a, i) => ({ a, i }))
    .sort((x, y) => rank(x.a.kind) - rank(y.a.kind) || x.i - y.i)
    .map((x) => x.a);
  const doc: StatusDoc = {
    schema: parts[0]?.doc.schema ?? 'loopx.status/1',
    generated_at: generatedAt,
    workspace: parts.length === 1 ? parts[0]!.doc.workspace : parts.map((p) => p.doc.workspace).join('\n'),
    counts,
    attention: parts.flatMap((p) => p.doc.attention),
    goals: parts.flatMap((p) => p.doc.goals),
    errors: parts.flatMap((p) => p.doc.errors),
    policy: mergedPolicy(parts),
  };
  return {
    type: 'status',
    doc,
    ...(detailed ? { attention } : {}),
    ...(parts.length > 1
      ? { folders: parts.map((p) => ({ path: p.path, name: p.name, goals: p.doc.goals.length })) }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// The page

/** The Content Security Policy of the dashboard page: nothing but our nonce'd script and files. */
export function dashboardCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data:`,
  ].join('; ');
}

/**
 * The policy of the same page served by the loopback status server (sent as a header too): its
 * own origin for everything, fetch and the event stream included, and nothing may frame it.
 */
export function browserDashboardCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'self'",
    "font-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const attr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The dashboard page. No workspace data is ever in it: the data arrives by message and is
 * rendered as text. The browser test serves exactly this page.
 */
export function dashboardHtml(o: {
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
  /** Style sheets loaded before `styleUri` (the browser's stand-in for VS Code's theme). */
  themeUris?: readonly string[];
  /** The whole policy, when not the webview's (`browserDashboardCsp`). */
  csp?: string;
}): string {
  const csp = o.csp ?? dashboardCsp(o.cspSource, o.nonce);
  const themes = (o.themeUris ?? []).map((u) => `<link rel="stylesheet" href="${attr(u)}">\n`).join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${themes}<link rel="stylesheet" href="${attr(o.styleUri)}">
<title>LoopX Dashboard</title>
</head>
<body>
<div id="app"></div>
<script nonce="${attr(o.nonce)}" src="${attr(o.scriptUri)}"></script>
</body>
</html>
`;
}

// ---------------------------------------------------------------------------------------------
// Webview -> extension

/** A workspace folder path as the webview got it from `folders` or `attention`. */
const Folder = lazy(() =>
  z
    .string()
    .min(1)
    .max(4096)
    .refine((s) => textProblem(s) === undefined, {
      message: 'must not contain control or invisible characters',
    }),
);

const withGoal = lazy(() => ({ goalId: Id, folder: Folder.optional() }));

export const WebviewMessage = lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('ready') }),
    z.strictObject({ type: z.literal('select-goal'), ...withGoal }),
    z.strictObject({ type: z.literal('reveal-goal'), ...withGoal }),
    z.strictObject({ type: z.literal('open-evidence'), ...withGoal, evidenceId: Id }),
    z.strictObject({ type: z.literal('approve-gate'), ...withGoal, gateId: Id }),
    z.strictObject({ type: z.literal('reject-gate'), ...withGoal, gateId: Id }),
    // An item of All workspaces: its window (a workspace the extension finds in the machine's list).
    z.strictObject({ type: z.literal('open-workspace'), folder: Folder, goalId: Id.optional() }),
  ]),
);
export type WebviewMessage = z.infer<typeof WebviewMessage>;
export type Msg = WebviewMessage;

/** The webview's message if it is one of the accepted ones, exactly; otherwise undefined. */
export function parseWebviewMessage(raw: unknown): Msg | undefined {
  const r = WebviewMessage.safeParse(raw);
  return r.success ? r.data : undefined;
}
