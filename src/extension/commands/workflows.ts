/**
 * Run Workflow...: a person adds a declared workflow (a built-in, or a team's
 * `.loopx/capabilities/<name>.json`) to a goal. Pick the goal and the workflow, fill in its
 * parameters (each box checks the value as the core will), then read every todo, command and
 * gate it adds in a modal and confirm. The modal shows always, not only when other code called
 * the command: the commands come from a file, not from what the person typed, and once added
 * as the person's they need no review.
 */
import * as vscode from 'vscode';
import type { ExpandedWorkflow, GoalState, WorkflowEntry } from '../../core/index';
import {
  declaredWords,
  expandWorkflow,
  invoke,
  listWorkflows,
  LoopxError,
  paramRequired,
  paramsInActions,
  paramValueProblem,
  plainText,
  problemText,
  resolveParams,
  WORKFLOW_RUN,
} from '../../core/index';
import type { GoalRef } from '../workspace/workspaces';
import { confirmDecision, whole } from './decisionModal';
import type { Arg, CommandDeps, CommandTable } from './shared';
import { argsOf, Cancelled, guardTrust, input, person, pickGoal } from './shared';

export function workflowCommands(deps: CommandDeps): CommandTable {
  return { 'loopx.runWorkflow': (a) => runWorkflow(deps, a) };
}

const open = (s: GoalState) => s.status === 'active' || s.status === 'paused';

async function runWorkflow(deps: CommandDeps, a: Arg): Promise<string> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a, open, 'goal to run a workflow on');
  const { workflows, problems } = listWorkflows(ref.store);
  for (const p of problems) deps.log.warn(`workflow file: ${problemText(p)}`);
  const wf = await pickWorkflow(workflows, args.workflow, problems.length);
  const params = await askParams(wf, args.params ?? {}, args.workflow !== undefined);
  const preview = expandWorkflow(wf, params);
  const state = ref.store.load(ref.goalId).state;
  await confirmDecision(a, () => ({
    message: `Run workflow "${plainText(wf.title)}" on goal "${plainText(state.title)}"?`,
    detail: previewText(ref, state, wf, preview),
    action: 'Run Workflow',
    verb: 'run it',
  }));
  const r = invoke(ref.store, WORKFLOW_RUN, { goalId: ref.goalId, name: wf.name, params }, person());
  const added = `${preview.todos.length} todo${preview.todos.length === 1 ? '' : 's'}${
    preview.gates.length ? ` and ${preview.gates.length} gate${preview.gates.length === 1 ? '' : 's'}` : ''
  }`;
  deps.log.info(`workflow ${wf.name} on goal ${ref.goalId}: added ${added} (revision ${r.revision})`);
  void vscode.window.showInformationMessage(
    `Workflow "${plainText(wf.title)}" added ${added} to "${plainText(state.title)}".`,
  );
  return ref.goalId;
}

async function pickWorkflow(
  workflows: WorkflowEntry[],
  given: string | undefined,
  problems: number,
): Promise<WorkflowEntry> {
  if (given !== undefined) {
    const wf = workflows.find((w) => w.name === given);
    if (!wf)
      throw new LoopxError(
        'not_found',
        `there is no workflow ${JSON.stringify(given)}: \`loopx capabilities\` lists them`,
        { reason: 'no_workflow' },
      );
    return wf;
  }
  if (workflows.length === 0) throw new LoopxError('not_found', 'there is no workflow to run');
  const pick = await vscode.window.showQuickPick(
    workflows.map((w) => ({
      label: w.title,
      description: `${w.name} · ${w.source === 'builtin' ? 'built in' : w.file}`,
      detail: `${w.summary} Declares ${declaredWords(w.quota)}.`,
      w,
    })),
    {
      placeHolder:
        problems > 0
          ? `Choose a workflow (${problems} workflow file${problems > 1 ? 's' : ''} could not be read: see the LoopX log)`
          : 'Choose a workflow',
      matchOnDescription: true,
      matchOnDetail: true,
    },
  );
  if (!pick) throw new Cancelled();
  return pick.w;
}

/**
 * Each parameter in an input box, checked by the core's own rule (`paramValueProblem`) as it is
 * typed. Given values (a command call's) are checked by `resolveParams`, and not asked again.
 */
async function askParams(
  wf: WorkflowEntry,
  given: Record<string, string>,
  direct: boolean,
): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  const inActions = paramsInActions(wf.workflow);
  const problemWith = (name: string, v: string): string | undefined => {
    const problem = paramValueProblem(name, wf.params[name]!, v, inActions.has(name));
    return problem && `${name}: ${problem.message}`;
  };
  for (const [name, p] of Object.entries(wf.params)) {
    if (Object.hasOwn(given, name)) {
      values[name] = given[name]!;
      continue;
    }
    if (direct) continue; // a command call leaves the rest to the defaults; the core checks them
    const v = await input({
      prompt: `${wf.title}: ${name}${paramRequired(p) ? '' : ' (optional)'}. ${p.description}`,
      value: p.default,
      placeHolder: p.pattern ? `matching ${p.pattern}` : undefined,
      validateInput: (s) => (s === '' && !paramRequired(p) ? undefined : problemWith(name, s)),
    });
    if (v !== '') values[name] = v;
  }
  for (const name of Object.keys(given)) if (!Object.hasOwn(wf.params, name)) values[name] = given[name]!;
  return resolveParams(wf.workflow, values);
}

/** Every fact of what the workflow adds: each todo with its whole command, each gate, the quota. */
function previewText(ref: GoalRef, state: GoalState, wf: WorkflowEntry, x: ExpandedWorkflow): string {
  const lines = [`Goal: ${whole(state.title)} (${ref.goalId})`];
  lines.push(`Workflow: ${whole(wf.title)} (${wf.name}, ${wf.source === 'builtin' ? 'built in' : wf.file})`);
  const params = Object.entries(x.params);
  if (params.length) lines.push(`Parameters: ${params.map(([k, v]) => `${k} = ${whole(v)}`).join(', ')}`);
  lines.push(`Declares: ${declaredWords(x.quota)}`, '', `Todos it adds (as yours):`);
  const keyOf = new Map(x.todos.map((t) => [t.id, t.key]));
  for (const t of x.todos) {
    const after = t.dependsOn.length ? `, after ${t.dependsOn.map((d) => keyOf.get(d)).join(', ')}` : '';
    lines.push(
      `- ${whole(t.title)} (${t.owner === 'user' ? 'a person' : 'an agent'}, ${t.priority}${after})`,
    );
    if (t.action) lines.push(`  runs: ${whole(t.action)}`);
  }
  if (x.gates.length) {
    lines.push('', 'Gates it asks a person to decide:');
    for (const g of x.gates)
      lines.push(`- ${whole(g.title)}, before ${g.guards.map((id) => keyOf.get(id)).join(', ')}`);
  }
  return `${lines.join('\n')}\n\n`;
}
