/**
 * Every failure the control plane reports on purpose is a LoopxError with a kind. Adapters map the
 * kind to their own signal (CLI exit code, HTTP status, tool error text); the message is written
 * for a person and names what was wrong and where. `reason` is the machine-readable code (snake
 * case, e.g. `todo_finished`, `gate_not_approved`): every refusal gives one, and code that reacts
 * to an error branches on it, never on the message text.
 */
export type ErrorKind =
  | 'usage' // bad input: a flag, an id, a value
  | 'not_found' // a goal, todo, gate, run or contract that does not exist
  | 'refused' // not allowed: contract, policy, gate, actor, state machine
  | 'conflict' // the goal moved on (optimistic concurrency) or a lock could not be taken
  | 'corrupt' // a file on disk that does not parse or validate
  | 'storage' // the disk refused a write (full, a size limit, an I/O error): nothing was acknowledged
  | 'internal';

/** A brand shared by every copy of this class in one process (see `Symbol.hasInstance` below). */
const BRAND = Symbol.for('loopx.LoopxError');

export class LoopxError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Extra machine-readable facts (file, line, field, goal id...). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'LoopxError';
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** What happened, for code: `details.reason` when given, else the kind. */
  get reason(): string {
    const r = this.details.reason;
    return typeof r === 'string' && r ? r : this.kind;
  }

  /**
   * `instanceof` by brand, not by class identity: dist/mcp.js bundles its own copy of the core, and
   * `loopx mcp` hands it a Store from dist/cli.js, so an error thrown by the store (a goal not
   * found, a corrupt file, a lock conflict) comes from the other copy of this class. Without the
   * brand the MCP server reported those as "unexpected error".
   */
  static override [Symbol.hasInstance](value: unknown): value is LoopxError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

export const usageError = (msg: string, details?: Record<string, unknown>) =>
  new LoopxError('usage', msg, details);
export const notFound = (msg: string, details?: Record<string, unknown>) =>
  new LoopxError('not_found', msg, details);
/** A refusal always says why, for code as well as for people: `details.reason` is required. */
export const refused = (msg: string, details: { reason: string } & Record<string, unknown>) =>
  new LoopxError('refused', msg, details);
export const conflict = (msg: string, details?: Record<string, unknown>) =>
  new LoopxError('conflict', msg, details);
export const corrupt = (msg: string, details?: Record<string, unknown>) =>
  new LoopxError('corrupt', msg, details);

/** A LoopxError as the adapters report it to programs (CLI --json, HTTP, MCP): snake_case keys. */
export interface ErrorReport {
  kind: ErrorKind;
  reason: string;
  message: string;
  goal_id?: unknown;
  file?: unknown;
  line?: unknown;
  field?: unknown;
}

/**
 * The machine-readable form of an error: kind, reason code, message, and where it was (when known).
 * Anything that is not a LoopxError is `internal`.
 */
export function errorReport(e: unknown): ErrorReport {
  if (!(e instanceof LoopxError))
    return { kind: 'internal', reason: 'internal', message: e instanceof Error ? e.message : String(e) };
  const out: ErrorReport = { kind: e.kind, reason: e.reason, message: e.message };
  for (const k of ['file', 'line', 'goalId', 'field'] as const)
    if (e.details[k] !== undefined) out[k === 'goalId' ? 'goal_id' : k] = e.details[k];
  return out;
}

/** Shows a value from the outside world safely inside a message: quoted, escaped, shortened. */
export function quote(value: unknown, max = 60): string {
  let s = typeof value === 'string' ? value : String(value);
  const long = s.length > max;
  if (long) s = s.slice(0, max);
  // JSON.stringify escapes C0 controls; DEL, C1 controls and line separators it leaves raw.
  return (
    JSON.stringify(s).replace(
      /[\u007f-\u009f\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ) + (long ? `… (${typeof value === 'string' ? value.length : '?'} characters)` : '')
  );
}
