/** Workflow capabilities: declared sequences of todos and gates a team adds without code. */
export { WorkflowFile, WorkflowParam, WorkflowQuota, workflowJsonSchema, PARAM_NAME } from './schema';
export type { WorkflowEntry, WorkflowProblem, WorkflowSource } from './schema';
export {
  listWorkflows,
  findWorkflow,
  parseWorkflowText,
  problemText,
  builtinWorkflows,
  WORKFLOWS_DIR,
} from './load';
export type { WorkflowList, WorkflowStore } from './load';
export {
  expandWorkflow,
  resolveParams,
  placeholders,
  paramValueProblem,
  paramRequired,
  paramsInActions,
  PARAM_VALUE_MAX,
} from './expand';
export type { ExpandedWorkflow, ExpandedTodo, ExpandedGate, ExpandOptions } from './expand';
export {
  overBudget,
  blockedWorkflows,
  instanceStarted,
  checkWorkflowBudget,
  overBudgetMessage,
  grantCommand,
} from './budget';
export type { BudgetShortfall, BlockedWorkflow } from './budget';
export { WORKFLOW_RUN, WorkflowRunInput } from './capability';
export type { PreparedWorkflowRun } from './capability';
export { capabilityCatalog, workflowCatalogEntry, paramsJsonSchema, declaredWords } from './catalog';
export type { CatalogEntry, WorkflowCatalogEntry } from './catalog';
