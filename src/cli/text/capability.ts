/** The text of `loopx capability run|show` and of `loopx capabilities`. */
import type { CatalogEntry, WorkflowEntry } from '../../core/index';
import { declaredWords, gateDecisionCommand } from '../../core/index';
import { columns, plural } from './format';

/** What `capability run` printed, as its JSON (`loopx.workflow-run/1`) has it. */
export interface WorkflowRunOut {
  goal_id: string;
  instance_id: string;
  name: string;
  revision: number;
  todos: { id: string; key: string; title: string; action?: string; gate?: string }[];
  gates: { id: string; key: string; title: string; status: string; guards: string[] }[];
  declared_quota: Record<string, number | undefined>;
}

export function workflowRunText(o: WorkflowRunOut): string {
  const out = [
    `started workflow ${o.name} (${o.instance_id}) on goal ${o.goal_id}: ${plural(o.todos.length, 'todo')}, ${plural(o.gates.length, 'gate')}`,
    'todos:',
    ...columns(
      o.todos.map((t) => [t.id, t.title, t.action ? `$ ${t.action}` : '(judgment)']),
      { indent: '  ' },
    ),
  ];
  if (o.gates.length) {
    out.push('gates:');
    out.push(
      ...columns(
        o.gates.map((g) => [g.id, g.title, `${g.status}, guards ${g.guards.join(', ')}`]),
        { indent: '  ' },
      ),
    );
    const pending = o.gates.filter((g) => g.status === 'pending');
    if (pending.length)
      out.push(
        `a person approves ${pending.length === 1 ? 'it' : 'each'} with ${gateDecisionCommand('approve', o.goal_id, pending[0]!.id)}`,
      );
  }
  out.push(`declared quota: ${declaredWords(o.declared_quota)}`);
  return out.join('\n');
}

export function workflowShowText(w: WorkflowEntry): string {
  const wf = w.workflow;
  const out = [`${w.name}: ${w.title} (${w.source}, ${w.file})`, w.summary];
  if (w.description) out.push(w.description);
  const params = Object.entries(w.params);
  out.push(params.length ? 'params:' : 'params: none');
  out.push(
    ...columns(
      params.map(([n, p]) => [
        n,
        p.description,
        [
          p.default !== undefined ? `default ${p.default}` : p.required === false ? 'optional' : 'required',
          p.pattern !== undefined ? `pattern ${p.pattern}` : '',
        ]
          .filter(Boolean)
          .join(', '),
      ]),
      { indent: '  ' },
    ),
  );
  out.push('todos:');
  out.push(
    ...columns(
      wf.todos.map((t) => [
        t.key,
        `${t.priority} ${t.owner}`,
        t.title,
        [
          t.action ? `$ ${t.action}` : '(judgment)',
          t.dependsOn.length ? `after ${t.dependsOn.join(', ')}` : '',
          t.gate ? `gate ${t.gate}` : '',
        ]
          .filter(Boolean)
          .join('; '),
      ]),
      { indent: '  ' },
    ),
  );
  if (wf.gates.length) {
    out.push('gates:');
    out.push(
      ...columns(
        wf.gates.map((g) => [g.key, g.title, g.reason]),
        { indent: '  ' },
      ),
    );
  }
  out.push(`declared quota: ${declaredWords(w.quota)}`);
  return out.join('\n');
}

export function catalogText(entries: readonly CatalogEntry[]): string {
  const core = entries.filter((e) => e.kind === 'core');
  const workflows = entries.filter((e) => e.kind === 'workflow');
  const out = columns(core.map((c) => [c.id, `${c.humanOnly ? '[human] ' : ''}${c.summary}`]));
  if (workflows.length) {
    out.push('', 'workflows (loopx capability run <name> --goal-id G --param k=v):');
    out.push(
      ...columns(
        workflows.map((w) => [w.name, `[${w.source}] ${w.summary}`]),
        { indent: '  ' },
      ),
    );
  }
  return out.join('\n');
}
