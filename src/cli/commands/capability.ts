/** `loopx capability`: running, showing and describing workflow capabilities. */
import type { Command } from 'commander';
import type { PreparedWorkflowRun } from '../../core/index';
import { findWorkflow, invoke, quote, usageError, WORKFLOW_RUN, workflowJsonSchema } from '../../core/index';
import type { Act } from '../define';
import { example } from '../define';
import type { WorkflowRunOut } from '../text';
import { workflowRunText, workflowShowText } from '../text';

/** The repeatable `--param k=v`, kept raw: checked once all are known. */
const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `--param` values by name: each has a name and `=`, and each name comes once. */
export function parseParams(raw: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of raw) {
    const eq = p.indexOf('=');
    if (eq <= 0)
      throw usageError(`--param ${quote(p)}: give NAME=VALUE (e.g. --param issue=17)`, {
        field: '--param',
        reason: 'param_malformed',
      });
    const name = p.slice(0, eq);
    if (Object.hasOwn(out, name))
      throw usageError(`--param ${name} is given twice: give each parameter once`, {
        field: '--param',
        param: name,
        reason: 'param_duplicate',
      });
    out[name] = p.slice(eq + 1);
  }
  return out;
}

export function registerCapabilityCommands(program: Command, act: Act) {
  const cap = example(
    program
      .command('capability')
      .description('workflow capabilities: declared todos and gates a team adds without code'),
    'loopx capability run issue-fix --goal-id G --param issue=17',
    'loopx capability show release',
  );
  example(
    cap
      .command('run <name>')
      .description(
        "add a workflow's todos and gates to a goal (refused when it declares more quota than is left)",
      )
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--param <name=value>', 'a parameter of the workflow (repeatable)', collect)
      .action(
        act((ctx, name: string, o: { goalId: string; param?: string[] }) => {
          const params = parseParams(o.param ?? []);
          const store = ctx.store();
          const res = invoke<PreparedWorkflowRun>(
            store,
            WORKFLOW_RUN,
            { goalId: o.goalId, name, params },
            ctx.actor(),
          );
          const x = res.input.expanded;
          const out: WorkflowRunOut & Record<string, unknown> = {
            schema: 'loopx.workflow-run/1',
            goal_id: res.goalId,
            revision: res.revision,
            instance_id: x.instanceId,
            name: x.name,
            source: x.source,
            params: x.params,
            todo_ids: x.todos.map((t) => t.id),
            gate_ids: x.gates.map((g) => g.id),
            todos: x.todos.map((t) => {
              const s = res.state.todos.find((y) => y.id === t.id);
              return {
                id: t.id,
                key: t.key,
                title: t.title,
                ...(t.action !== undefined ? { action: t.action } : {}),
                ...(s?.gate !== undefined ? { gate: s.gate } : {}),
              };
            }),
            gates: res.state.gates
              .filter((g) => x.todos.some((t) => g.guards.includes(t.id)))
              .map((g) => ({
                id: g.id,
                key: x.gates.find((y) => y.id === g.id)?.key ?? g.id,
                title: g.title,
                status: g.status,
                guards: g.guards,
              })),
            declared_quota: x.quota,
          };
          ctx.print(out, () => workflowRunText(out));
        }),
      ),
    'loopx capability run issue-fix --goal-id G --param issue=17',
    'loopx --json capability run release --goal-id G --param version=1.4.0 | jq -r .instance_id',
  );
  example(
    cap
      .command('show <name>')
      .description("a workflow's parameters, todos, gates, declared quota and where it comes from")
      .action(
        act((ctx, name: string) => {
          const w = findWorkflow(ctx.store(), name);
          ctx.print(
            {
              schema: 'loopx.workflow/1',
              name: w.name,
              title: w.title,
              summary: w.summary,
              ...(w.description !== undefined ? { description: w.description } : {}),
              source: w.source,
              file: w.file,
              params: w.params,
              todos: w.workflow.todos,
              gates: w.workflow.gates,
              quota: w.quota,
            },
            () => workflowShowText(w),
          );
        }),
      ),
    'loopx capability show issue-fix',
  );
  example(
    cap
      .command('schema')
      .description('the JSON schema of .loopx/capabilities/<name>.json files, for an editor')
      .action(
        act((ctx) => {
          ctx.io.stdout(JSON.stringify(workflowJsonSchema(), null, 2) + '\n');
        }),
      ),
    'loopx capability schema > capability.schema.json',
  );
}
