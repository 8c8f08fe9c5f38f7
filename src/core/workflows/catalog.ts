/**
 * The whole catalog `loopx capabilities` lists and the docs are generated from: the core
 * capabilities and the workflows, each workflow described with the fields a core declaration has
 * (touches, gates, quota, actors, input) where they mean something.
 */
import type { CapabilityDeclaration } from '../capabilities';
import { listCapabilities, whyNotAllowed } from '../capabilities';
import { budgetAmount, budgetLabel } from '../views';
import { WORKFLOW_BUDGETS } from './budget';
import { WORKFLOW_RUN } from './capability';
import { anchoredPattern, PARAM_VALUE_MAX, paramRequired } from './expand';
import type { WorkflowStore } from './load';
import { listWorkflows } from './load';
import type { WorkflowEntry, WorkflowProblem, WorkflowQuota, WorkflowSource } from './schema';

export interface WorkflowCatalogEntry extends CapabilityDeclaration {
  kind: 'workflow';
  /** `workflow:<name>` */
  id: string;
  name: string;
  title: string;
  source: WorkflowSource;
  file: string;
  /** What it declares it will spend, as numbers. */
  declared: WorkflowQuota;
  /** The capability that runs it, and how. */
  runWith: string;
}
export type CatalogEntry = (CapabilityDeclaration & { kind: 'core' }) | WorkflowCatalogEntry;

/** `turns 12, tokens 400,000, cost $5`, or `nothing declared`. */
export function declaredWords(q: WorkflowQuota): string {
  const parts = WORKFLOW_BUDGETS.filter((k) => q[k] !== undefined).map(
    (k) => `${budgetLabel(k)} ${budgetAmount(k, q[k]!)}`,
  );
  return parts.length ? parts.join(', ') : 'nothing declared';
}

/** The JSON schema of a workflow's parameters (what `params` of workflow.run takes for it). */
export function paramsJsonSchema(wf: WorkflowEntry): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, p] of Object.entries(wf.params)) {
    properties[name] = {
      type: 'string',
      description: p.description,
      minLength: 1,
      maxLength: PARAM_VALUE_MAX,
      ...(p.pattern !== undefined ? { pattern: anchoredPattern(p.pattern) } : {}),
      ...(p.default !== undefined ? { default: p.default } : {}),
    };
    if (paramRequired(p)) required.push(name);
  }
  return {
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}

export function workflowCatalogEntry(wf: WorkflowEntry): WorkflowCatalogEntry {
  const w = wf.workflow;
  const gates = w.gates.length
    ? `requests ${w.gates.map((g) => `gate ${g.key} (${g.title})`).join(', ')}, and the policy gates of its actions`
    : 'requests the policy gates of its actions';
  const agentMay = !whyNotAllowed(WORKFLOW_RUN, { kind: 'agent', id: 'agent', channel: 'cli' });
  return {
    kind: 'workflow',
    id: `workflow:${wf.name}`,
    name: wf.name,
    title: wf.title,
    summary: wf.summary,
    touches: ['todos', 'gates', 'workflows'],
    gates,
    quota: `declares ${declaredWords(wf.quota)}; refused when more than the goal has left`,
    actors: agentMay ? ['user', 'agent'] : ['user'],
    humanOnly: false,
    input: paramsJsonSchema(wf),
    source: wf.source,
    file: wf.file,
    declared: wf.quota,
    runWith: `loopx capability run ${wf.name} --goal-id G${Object.keys(wf.params)
      .filter((n) => paramRequired(wf.params[n]!))
      .map((n) => ` --param ${n}=...`)
      .join('')}`,
  };
}

/** Every capability: the core's, then the workflows (built-in and the workspace's), and the workspace files' problems. */
export function capabilityCatalog(store: WorkflowStore): {
  entries: CatalogEntry[];
  problems: WorkflowProblem[];
} {
  const { workflows, problems } = listWorkflows(store);
  return { entries: [...listCapabilities(), ...workflows.map(workflowCatalogEntry)], problems };
}
