/** Text renderings for a person at a terminal. JSON output never goes through here. */
export { goalText, todoLines, gateLines, gateListText } from './goal';
export { statusText } from './status';
export { shouldRunText } from './contract';
export { summaryText, turnText } from './summary';
export { quotaText, windowWords } from './quota';
export { repairText, verifyText, capabilitiesText } from './checks';
export * from './format';
export { workflowRunText, workflowShowText, catalogText } from './capability';
export type { WorkflowRunOut } from './capability';
