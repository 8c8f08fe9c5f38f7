/**
 * The shape of the machine-wide queue: what needs the person across every workspace listed in the
 * config folder (`loopx status --all`, `loopx gate list --all`, the dashboard's All workspaces,
 * the status server's `/all`). Built by reach/needs-you.ts.
 */
import { z } from 'zod';
import { lazy } from '../model';

export const NEEDS_YOU_SCHEMA = 'loopx.needs-you/1';

export const QueueWorkspace = lazy(() =>
  z.strictObject({
    path: z.string(),
    name: z.string(),
    key: z.string(),
    identity: z.string().optional(),
    /** Items it has in the queue. */
    items: z.number(),
    /** Why it could not be read (its items are then missing). */
    problem: z.string().optional(),
  }),
);
export type QueueWorkspace = z.infer<typeof QueueWorkspace>;

export const NeedsYouItem = lazy(() =>
  z.strictObject({
    /** `key`: the workspace's name in links on this machine (`/decide/<key>/...`; store/config-dir.ts workspaceId). */
    workspace: z.strictObject({ path: z.string(), name: z.string(), key: z.string() }),
    /** `lane`: a lane of `loopx drive` that only a person can move on (docs/DRIVE.md). */
    kind: z.enum(['gate', 'user-todo', 'denied', 'quota', 'plan', 'lane']),
    goal_id: z.string(),
    goal_title: z.string(),
    id: z.string(),
    title: z.string(),
    detail: z.string(),
    /** Gates: who asked, when, and every command the gate lets run, whole. */
    requested_by: z.string().optional(),
    requested_at: z.string().optional(),
    commands: z.array(z.string()).optional(),
    /** The command a person runs at a terminal to act on it. */
    cli: z.string().optional(),
  }),
);
export type NeedsYouItem = z.infer<typeof NeedsYouItem>;

export const NeedsYouDoc = lazy(() =>
  z.strictObject({
    schema: z.literal(NEEDS_YOU_SCHEMA),
    generated_at: z.string(),
    workspaces: z.array(QueueWorkspace),
    items: z.array(NeedsYouItem),
    /** Listed workspaces whose folder is gone, removed from the list by this reading. */
    pruned: z.array(z.string()),
  }),
);
export type NeedsYouDoc = z.infer<typeof NeedsYouDoc>;

export const WORKSPACES_SCHEMA = 'loopx.workspaces/1';

/** `loopx workspaces`: the listed workspaces, each with how many items it has in the queue. */
export const WorkspacesDoc = lazy(() =>
  z.strictObject({
    schema: z.literal(WORKSPACES_SCHEMA),
    workspaces: z.array(QueueWorkspace),
    pruned: z.array(z.string()),
  }),
);

export const WorkspaceForgetOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.workspace-forget/1'),
    path: z.string(),
    forgotten: z.boolean(),
  }),
);
