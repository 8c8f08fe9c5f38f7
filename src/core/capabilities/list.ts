/**
 * Every state change LoopX makes, in one list: the order here is the order `loopx capabilities`
 * and docs/capabilities/ list them. Nothing registers itself on import; the registry
 * (registry.ts) is built from this list on first use.
 */
import { defineWorkflowCapabilities } from '../workflows';
import { defineContractCapabilities } from './contract';
import { defineDenialCapabilities } from './denials';
import { defineEvidenceCapabilities } from './evidence';
import { defineExecCapabilities } from './exec';
import { defineGateCapabilities } from './gates';
import { defineGoalCapabilities } from './goals';
import { defineQuotaCapabilities } from './quota';
import { defineRunCapabilities, defineRunRepairCapabilities } from './runs';
import { defineTodoCapabilities } from './todos';
import type { Capability, DefineCapability } from './types';

/** Read when the registry is built, not at load: the workflows subsystem imports this one. */
const definers = (): ((define: DefineCapability) => void)[] => [
  defineGoalCapabilities, // goal.create, goal.pause, goal.resume, goal.close, goal.cancel
  defineTodoCapabilities, // todo.add, todo.claim, todo.release, todo.update, todo.complete, todo.cancel
  defineGateCapabilities, // gate.request, gate.approve, gate.reject, gate.expire
  defineEvidenceCapabilities, // evidence.add
  defineRunCapabilities, // run.start, run.spend, run.capture, run.end, reward.add
  defineQuotaCapabilities, // quota.set, quota.grant
  defineDenialCapabilities, // agent.deny
  defineWorkflowCapabilities, // workflow.run
  defineContractCapabilities, // contract.issue
  defineExecCapabilities, // exec.record
  defineRunRepairCapabilities, // run.abandon
];

/** Every capability, declared afresh (the registry calls this once). */
export function allCapabilities(): Capability[] {
  const list: Capability[] = [];
  for (const defineAll of definers()) defineAll((c) => list.push(c as unknown as Capability));
  return list;
}
