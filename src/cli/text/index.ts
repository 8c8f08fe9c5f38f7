/** Text renderings for a person at a terminal. JSON output never goes through here. */
export { catalogText, workflowRunText, workflowShowText } from './capability';
export type { WorkflowRunOut } from './capability';
export { capabilitiesText, repairText, verifyText } from './checks';
export { shouldRunText } from './contract';
export * from './format';
export { gateLines, gateListText, goalText, todoLines } from './goal';
export { needsYouText, workspacesText } from './needs-you';
export { quotaText, windowWords } from './quota';
export { statusText } from './status';
export { summaryText, turnText } from './summary';
