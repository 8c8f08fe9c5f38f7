/** The shape of a capability, shared by the registry and the modules that declare capabilities. */
import type { z } from 'zod';
import type { Actor, EventDraft, GoalState, Policy } from '../model';
import type { Store } from '../store';

export interface CapabilityContext {
  actor: Actor;
  now: Date;
  policy: Policy;
  /** HMAC over a canonical payload with this workspace's contract key. */
  sign: (payload: string) => string;
  /** This clone's writer id: what it issues (contracts) binds to it. */
  writer: string;
}

export interface CapabilityDeclaration {
  id: string;
  summary: string;
  /** Parts of the goal state it changes. */
  touches: string[];
  /** Gates it needs, in words (a gate id is data, so this names the rule). */
  gates: string;
  /** What quota it consumes. */
  quota: string;
  /** Who may call it. Human-only capabilities also require a human channel. */
  actors: Actor['kind'][];
  humanOnly: boolean;
  /** JSON schema of the input, generated from the zod schema. */
  input: unknown;
}

export interface Capability<S extends z.ZodType = z.ZodType> extends Omit<
  CapabilityDeclaration,
  'humanOnly' | 'input'
> {
  humanOnly?: boolean;
  input: S;
  /** 'create' makes a new goal; the others need an existing one. */
  goal?: 'create' | 'existing';
  /** Fills generated ids so the caller learns them (`store`: what it may read to do so). */
  prepare?: (input: z.infer<S>, store: Store) => z.infer<S>;
  plan: (state: GoalState, input: z.infer<S>, ctx: CapabilityContext) => EventDraft[];
  /** Allowed on closed or cancelled goals (human feedback after the fact). */
  onFinishedGoal?: boolean;
}

/** How a domain module registers its capabilities: the registry's `define`, passed in. */
export type DefineCapability = <S extends z.ZodType>(c: Capability<S>) => void;
