/** Workflow capabilities: declared sequences of todos and gates a team adds without code. */
export {
  blockedWorkflows,
  checkWorkflowBudget,
  grantCommand,
  instanceStarted,
  overBudget,
  overBudgetMessage,
} from './budget';
export type { BlockedWorkflow, BudgetShortfall } from './budget';
export { defineWorkflowCapabilities, WORKFLOW_RUN, WorkflowRunInput } from './capability';
export type { PreparedWorkflowRun } from './capability';
export { capabilityCatalog, declaredWords, paramsJsonSchema, workflowCatalogEntry } from './catalog';
export type { CatalogEntry, WorkflowCatalogEntry } from './catalog';
export {
  expandWorkflow,
  PARAM_VALUE_MAX,
  paramRequired,
  paramsInActions,
  paramValueProblem,
  placeholders,
  resolveParams,
} from './expand';
export type { ExpandedGate, ExpandedTodo, ExpandedWorkflow, ExpandOptions } from './expand';
export {
  builtinWorkflows,
  findWorkflow,
  listWorkflows,
  parseWorkflowText,
  problemText,
  WORKFLOWS_DIR,
} from './load';
export type { WorkflowList, WorkflowStore } from './load';
export { PARAM_NAME, WorkflowFile, workflowJsonSchema, WorkflowParam, WorkflowQuota } from './schema';
export type { WorkflowEntry, WorkflowProblem, WorkflowSource } from './schema';
