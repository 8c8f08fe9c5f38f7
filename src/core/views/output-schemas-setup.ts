/**
 * The shapes of the documents the CLI prints about the workspace and this machine rather than a
 * goal (zod schemas; OUTPUT_SCHEMAS in output-schemas.ts lists every document): init, installs,
 * self-repair, keys, the policy, and the status server's addresses.
 */
import { z } from 'zod';
import { Policy, lazy } from '../model';
import type { RepairReport } from '../setup';

/** `init`: the workspace made (or found). */
export const InitOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.init/1'),
    workspace: z.string(),
    /** The `.loopx/` folder. */
    root: z.string(),
    /** Whether this machine has a person's signing key yet (`loopx key create`). */
    person_key: z.boolean(),
  }),
);
export type InitOutput = z.infer<typeof InitOutput>;

/** `install-command`: the files it copied or would copy, the shim, and whether its folder is on PATH. */
export const InstallCommandOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.install-command/1'),
    prefix: z.string(),
    version: z.string(),
    /** The folder the files were copied from (the running CLI's). */
    source: z.string(),
    shim: z.string(),
    target: z.string(),
    files: z.array(z.strictObject({ path: z.string(), changed: z.boolean() })),
    on_path: z.boolean(),
    dry_run: z.boolean(),
  }),
);
export type InstallCommandOutput = z.infer<typeof InstallCommandOutput>;

/** `hooks install`: the hook shim, and the hosts' settings files it changes (with their new text). */
export const HooksInstallOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.hooks-install/1'),
    shim: z.string(),
    /** The CLI script the shim runs. */
    cli: z.string(),
    dry_run: z.boolean(),
    /** Every file that changes, with its whole new content. */
    files: z.array(z.strictObject({ path: z.string(), after: z.string() })),
    /** The files written (none with --dry-run). */
    written: z.array(z.string()),
  }),
);
export type HooksInstallOutput = z.infer<typeof HooksInstallOutput>;

/** `self-repair`: what it found and what it fixed. */
export const RepairOutput = lazy(
  () =>
    z.strictObject({
      schema: z.literal('loopx.repair/1'),
      dry_run: z.boolean(),
      checked_goals: z.number().int(),
      findings: z.array(
        z.strictObject({
          /** null for what belongs to no goal (a lock, a secret in the workspace). */
          goal_id: z.string().nullable(),
          kind: z.enum([
            'torn-tail',
            'corrupt-log',
            'log-legacy',
            'snapshot-stale',
            'run-abandoned',
            'claim-stale',
            'gate-expired',
            'index-stale',
            'lock-stale',
            'secret-in-workspace',
          ]),
          message: z.string(),
          fixed: z.boolean(),
        }),
      ),
      /** How many fixes it made. */
      changed: z.number().int(),
    }) satisfies z.ZodType<RepairReport>,
);
export type RepairOutput = z.infer<typeof RepairOutput>;

/** `key create`, `approvers trust`: the key made or pinned. */
export const KeyOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.key/1'),
    /** sha256 of the public key (hex). */
    key_id: z.string(),
    /** Its first 16 hex digits in groups of 4, as people compare them. */
    fingerprint: z.string(),
    name: z.string(),
    created_at: z.string(),
    /** Its decisions count on this machine. */
    pinned: z.boolean(),
    /** It is in the workspace's `.loopx/approvers/` for teammates. */
    published: z.boolean(),
    /** `key create` in a workspace whose policy nobody signed yet: signed now, or left for review. */
    policy: z.enum(['signed', 'review']).optional(),
  }),
);
export type KeyOutput = z.infer<typeof KeyOutput>;

/** `policy show|sign|allow`: which policy applies, who signed it, and what waits for a signature. */
export const PolicyOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.policy/1'),
    state: z.enum(['signed', 'unsigned_changes', 'not_signed']),
    signed_by: z.string().optional(),
    signed_at: z.string().optional(),
    /** The signing key's fingerprint. */
    key: z.string().optional(),
    /** Fields of policy.json with no effect until a person signs them. */
    unsigned_changes: z.array(z.string()),
    /** Why a signed policy found was not used (a bad signature, a key not pinned here). */
    ignored: z.array(z.string()),
    /** The policy LoopX enforces. */
    effective: Policy,
  }),
);
export type PolicyOutput = z.infer<typeof PolicyOutput>;

/** `status-server`: where it listens, its token, and a one-time login link for the dashboard. */
export const StatusServerOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.status-server/1'),
    url: z.string(),
    port: z.number().int(),
    token: z.string(),
    login_url: z.string(),
  }),
);
export type StatusServerOutput = z.infer<typeof StatusServerOutput>;

/** `status-server --print-token`: the workspace's status server token, and the file that keeps it. */
export const StatusTokenOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.status-token/1'),
    token: z.string(),
    file: z.string(),
  }),
);
export type StatusTokenOutput = z.infer<typeof StatusTokenOutput>;

/** `key passkey add`: a one-time link that registers a passkey at the status server on a port. */
export const PasskeyLinkOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.passkey-link/1'),
    url: z.string(),
    name: z.string(),
    expires_at: z.string(),
  }),
);

/** `status-server --login-link`: a fresh one-time dashboard link for the server running on a port. */
export const LoginLinkOutput = lazy(() =>
  z.strictObject({
    schema: z.literal('loopx.login-link/1'),
    url: z.string(),
    expires_at: z.string(),
  }),
);
export type LoginLinkOutput = z.infer<typeof LoginLinkOutput>;
