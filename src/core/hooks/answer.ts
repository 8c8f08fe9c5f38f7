/** What every hook event reads and answers: the host's JSON payload and LoopX's reply. */
import { z } from 'zod';
import type { DenyCode } from '../model';
import { lazy } from '../model';

export const HOOK_EVENTS = ['pre-tool-use', 'session-start', 'stop'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const HookPayload = lazy(() =>
  z.looseObject({
    hook_event_name: z.string().optional(),
    session_id: z.string().optional(),
    cwd: z.string().optional(),
    tool_name: z.string().optional(),
    tool_input: z.unknown().optional(),
    /** Claude Code: the session's transcript (JSON lines), read by the Stop hook for the spend. */
    transcript_path: z.string().optional(),
  }),
);
export type HookPayload = z.infer<typeof HookPayload>;

/** What a PreToolUse refusal was about, for the goal's record (`agent.denied`). */
export interface DeniedCall {
  code: DenyCode;
  reason: string;
  tool: string;
  command?: string;
  path?: string;
  /** False when observe mode let it through and only records it. */
  enforced: boolean;
}

export interface HookAnswer {
  /** What to print on stdout (JSON the host reads). */
  output: Record<string, unknown>;
  /** 0 lets the tool run (or leaves it to the host); 2 blocks it (hosts show stderr to the agent). */
  exitCode: 0 | 2;
  /** For stderr when blocking. */
  reason?: string;
  /** A refusal (or, in observe mode, a refusal not enforced) to record on the goal. */
  denied?: DeniedCall;
}

/**
 * How a `loopx` argument list reads, as the CLI's own parser reads it (src/cli/parse-loopx.ts
 * passes it in: the core never imports the CLI).
 * - `run`: the command (its path of names, aliases resolved), its options with the global ones,
 *   and its operands, exactly as the action would receive them;
 * - `help`: help or the version is printed and nothing runs;
 * - `error`: the CLI refuses the arguments (the command reached so far, if any).
 */
export type LoopxArgs =
  | { kind: 'run'; command: string[]; options: Record<string, unknown>; operands: unknown[] }
  | { kind: 'help'; command: string[] }
  | { kind: 'error'; command: string[]; message: string };
export type ParseLoopx = (argv: string[]) => LoopxArgs;
