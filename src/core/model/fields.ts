/**
 * The fields every part of the goal model is made of: ids, text under the store's one rule for
 * characters, timestamps and who acted. Part of the goal model (model/goal-state.ts re-exports it), so it
 * depends on nothing but zod, like the rest.
 */
import { z } from 'zod';
import { ID_PATTERN, ID_RULE } from './ids';
import { lazy } from './lazy';
import { linesProblem, MAX_TEXT_LINES, textProblem } from './text-rules';

export const Id = lazy(() => z.string().regex(ID_PATTERN, { message: `not a valid id (${ID_RULE})` }));

/**
 * The call an event was written by: the caller's idempotency key (an id, by the id rule) and which
 * of that call's commits it was (`<key>#<n>`, a CLI command may commit more than once).
 */
export const CallKey = lazy(() =>
  z.string().regex(new RegExp(`${ID_PATTERN.source.slice(0, -1)}#[1-9][0-9]{0,5}$`), {
    message: `not a call (an idempotency key, ${ID_RULE}, then #<n>)`,
  }),
);

/** One line of text under the store's one rule for characters (model/text-rules.ts). */
export const Line = (max: number) =>
  z
    .string()
    .min(1, { message: 'must not be empty' })
    .max(max, { message: `must be at most ${max} characters` })
    .superRefine((s, ctx) => {
      const problem = textProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
/** Text that may span lines (newlines and tabs kept), under the same rule. */
export const Text = (max: number, opts: { maxLines?: number } = {}) =>
  z
    .string()
    .max(max, { message: `must be at most ${max} characters` })
    .superRefine((s, ctx) => {
      const problem =
        textProblem(s, { multiLine: true }) ??
        (opts.maxLines === undefined ? undefined : linesProblem(s, opts.maxLines));
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
/**
 * A reason, note or summary as a call writes it: at most MAX_TEXT_LINES lines, so a dialog can
 * show it. Only for new input: event schemas keep `Text`, so logs written before still replay.
 */
export const ShownText = (max: number) => Text(max, { maxLines: MAX_TEXT_LINES });

export const Timestamp = lazy(() => z.string().datetime({ offset: true }));

export const ActorKind = lazy(() => z.enum(['user', 'agent', 'system']));
/** Where a call came from. Human-only capabilities accept only the human channels. */
export const Channel = lazy(() =>
  z.enum(['cli', 'vscode', 'lm-tool', 'mcp', 'hook', 'http', 'system', 'browser']),
);
/** `browser`: a person's decision page, signed with a passkey per decision (trust/passkey.ts). */
export const HUMAN_CHANNELS: readonly Channel[] = ['cli', 'vscode', 'browser'];
/**
 * Who acted. `osUser`: the id is the OS account's name because the caller gave no agent name (an
 * unsigned call at a shell, which may be a person or any program): said so, never "agent".
 */
export const Actor = lazy(() =>
  z.object({ kind: ActorKind, id: Line(128), channel: Channel, osUser: z.literal(true).optional() }),
);

export type Id = z.infer<typeof Id>;
export type Actor = z.infer<typeof Actor>;
export type Channel = z.infer<typeof Channel>;
