/**
 * The workspace policy (`.loopx/policy.json`) as zod schemas, and the defaults that apply where it
 * is silent. Imported by the webview too, so it depends on nothing but zod and the goal model.
 */
import { z } from 'zod';
import { DEFAULT_QUOTA, Id, Quota } from './goal-state';
import { lazy } from './lazy';

// Edited by hand, so strict: an unknown key is a typo.

export const PolicyRule = lazy(() =>
  z.strictObject({
    /** A glob over the whole command: `*` matches any run of characters, everything else is literal. */
    pattern: z.string().min(1).max(500),
    gate: Id.optional(),
    reason: z.string().max(500).optional(),
  }),
);
/** `pattern`, or a pattern with words that must not appear after the program (`find *` but no `-exec`). */
export const AllowRule = lazy(() =>
  z.union([
    z.string().min(1).max(500),
    z.strictObject({
      pattern: z.string().min(1).max(500),
      except: z.array(z.string().min(1).max(100)).max(50).optional(),
      reason: z.string().max(500).optional(),
    }),
  ]),
);
export const Enforcement = lazy(() => z.enum(['enforce', 'observe']));
/** USD per million tokens. Cache writes default to 1.25x input, cache reads to 0.1x (rules/prices.ts). */
export const ModelPrice = lazy(() =>
  z.strictObject({
    inputPerMTok: z.number().nonnegative().max(1e4),
    outputPerMTok: z.number().nonnegative().max(1e4),
    cacheWritePerMTok: z.number().nonnegative().max(1e4).optional(),
    cacheReadPerMTok: z.number().nonnegative().max(1e4).optional(),
  }),
);
/** Why `name` cannot be a variable a runtime declares, or undefined when it can. */
function envNameProblem(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,99}$/.test(name)) return 'not an environment variable name';
  if (name.startsWith('LOOPX_')) return 'LOOPX_ variables are set by LoopX for the lane';
  return undefined;
}

/**
 * A program `loopx drive` may start for one agent turn: a preset (`claude-code`, `codex`) or an
 * argument list whose `{prompt}`, `{contract_file}`, `{contract_id}`, `{goal_id}`, `{lane}`,
 * `{workspace}` and `{cwd}` are filled in (each whole argument, never through a shell).
 */
export const Runtime = lazy(() =>
  z
    .strictObject({
      preset: z.enum(['claude-code', 'codex']).optional(),
      command: z.array(z.string().min(1).max(4000)).min(1).max(100).optional(),
      /** Added to the lane's environment (a secret belongs in the person's own environment, not here). */
      env: z.record(z.string(), z.string().max(4000)).optional(),
      /** A turn longer than this is stopped (SIGTERM, then SIGKILL) and its run ended `timed_out`. */
      turnTimeoutMinutes: z
        .number()
        .positive()
        .max(24 * 60)
        .optional(),
      /** Work in a git worktree and branch of the lane's own. */
      worktree: z.boolean().optional(),
    })
    .superRefine((r, ctx) => {
      if ((r.preset === undefined) === (r.command === undefined))
        ctx.addIssue({ code: 'custom', message: 'a runtime has either a preset or a command, not both' });
      for (const name of Object.keys(r.env ?? {})) {
        const problem = envNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', path: ['env', name], message: `${name}: ${problem}` });
      }
    }),
);
export type Runtime = z.infer<typeof Runtime>;
/** A runtime's name: how lanes refer to it. */
export const RUNTIME_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;

export const Policy = lazy(() =>
  z.strictObject({
    v: z.literal(1),
    defaultQuota: Quota.optional(),
    contractTtlMinutes: z
      .number()
      .positive()
      .max(24 * 60)
      .optional(),
    /** Commands matching these need the named gate approved before any contract lists them. */
    gatedActions: z.array(PolicyRule.required({ gate: true })).optional(),
    /** Commands matching these are never listed nor executed. */
    deniedActions: z.array(PolicyRule.omit({ gate: true })).optional(),
    /** Accepted and ignored: every person's decision is signed now (trust/signed-decisions.ts). */
    requireSignedApprovals: z.boolean().optional(),
    /** A claimed todo whose claim is older than this is released by self-repair. */
    claimTimeoutMinutes: z.number().positive().optional(),
    /** A pending gate older than this expires (self-repair). Unset: gates never expire. */
    gateExpiryHours: z.number().positive().optional(),
    /**
     * Whether a command an agent proposes for itself (a todo action added by an agent) waits for a
     * person's review gate before any contract lists it: `tools` (default) for language-model and
     * MCP tools, `all` also for agents using the CLI without a terminal, `none` never.
     */
    reviewAgentActions: z.enum(['tools', 'all', 'none']).optional(),
    /**
     * Shell commands the PreToolUse hook allows without a contract, matched on the command's words
     * (shell/allow-commands.ts). Unset: DEFAULT_ALLOW_COMMANDS; `[]`: none.
     */
    allowCommands: z.array(AllowRule).max(200).optional(),
    /**
     * `enforce` (default): the hooks block what no contract lists. `observe`: they block nothing of
     * that, and record what they would have blocked; LoopX's own state and a person's decisions stay
     * protected in both.
     */
    enforcement: Enforcement.optional(),
    /**
     * The programs `loopx drive` may start, by name. What runs is a person's decision: a runtime
     * added or changed counts only once the policy is signed; one taken out stops at once.
     */
    runtimes: z
      .record(z.string().regex(RUNTIME_NAME, { message: 'a runtime name is a-z, 0-9 and -' }), Runtime)
      .optional(),
    /** Prices per million tokens by model glob, ahead of the built-in table (rules/prices.ts). */
    prices: z.record(z.string().min(1).max(100), ModelPrice).optional(),
  }),
);
export type Policy = z.infer<typeof Policy>;
export type AllowRule = z.infer<typeof AllowRule>;
export type Enforcement = z.infer<typeof Enforcement>;
export type ModelPrice = z.infer<typeof ModelPrice>;

/**
 * What `init` writes and what applies when a policy leaves `allowCommands` out: commands that read
 * the workspace. `*` alone stands for any further words; `except` names words (globs) that make a
 * program do more than read: write a file, run a command of its own, delete.
 */
export const DEFAULT_ALLOW_COMMANDS: AllowRule[] = [
  'git status *',
  { pattern: 'git diff *', except: ['--output*', '--ext-diff'] },
  { pattern: 'git log *', except: ['--output*', '--ext-diff'] },
  { pattern: 'git show *', except: ['--output*', '--ext-diff'] },
  'git blame *',
  'git ls-files *',
  'git rev-parse *',
  'git branch --show-current',
  'pwd',
  'ls *',
  'cat *',
  'head *',
  'tail *',
  'wc *',
  // -C / --compile writes a compiled magic file (`file -C -m X` makes X.mgc); getopt takes
  // `--co` for --compile and a C in any cluster (`-bC`, `-Cm`).
  { pattern: 'file *', except: ['-*C*', '--co*'] },
  'stat *',
  'du *',
  'which *',
  { pattern: 'rg *', except: ['--pre*', '--hostname-bin*'] },
  'grep *',
  { pattern: 'find *', except: ['-exec*', '-ok*', '-delete', '-fprint*', '-fls'] },
];

export const DEFAULT_POLICY: Policy = {
  v: 1,
  defaultQuota: DEFAULT_QUOTA,
  contractTtlMinutes: 30,
  allowCommands: DEFAULT_ALLOW_COMMANDS,
  enforcement: 'enforce',
};

/** The longest a contract may last under `policy`, in minutes. */
export function policyTtlMinutes(policy: Policy): number {
  return policy.contractTtlMinutes ?? DEFAULT_POLICY.contractTtlMinutes!;
}
