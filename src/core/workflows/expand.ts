/**
 * A workflow made concrete: its parameters checked, placed into titles (as text) and into actions
 * (shell-quoted, so a value is always exactly one word), and fresh ids for its todos and gates.
 * Pure but for the random ids (`ids` lets a test fix them): no file, no store.
 */
import type { Owner, Priority } from '../model';
import { newId, quote, textProblem, usageError } from '../model';
import { shellQuote } from '../shell';
import type { WorkflowEntry, WorkflowFile, WorkflowParam, WorkflowQuota, WorkflowSource } from './schema';

/** `{name}` is a placeholder; `{{` and `}}` are a literal brace. */
const TOKEN = /\{\{|\}\}|\{([A-Za-z][A-Za-z0-9_]{0,31})\}/g;

/** The parameter names a text's placeholders use, in order, each once. */
export function placeholders(s: string): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(TOKEN)) if (m[1] && !out.includes(m[1])) out.push(m[1]);
  return out;
}

/**
 * The first placeholder of a command that stands inside quotes (or after a backslash), if any: a
 * quoted value is safe only as a word of its own, so inside "..." a `$(...)` in it would run.
 */
export function quotedPlaceholder(action: string): string | undefined {
  let quoteChar: string | undefined;
  for (let i = 0; i < action.length; i++) {
    const c = action[i]!;
    if (c === '\\' && quoteChar !== "'") {
      i++;
      continue;
    }
    if (quoteChar) {
      if (c === quoteChar) quoteChar = undefined;
      else if (c === '{') {
        const m = /^\{([A-Za-z][A-Za-z0-9_]{0,31})\}/.exec(action.slice(i));
        if (m && action[i - 1] !== '{') return m[1];
      }
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quoteChar = c;
  }
  return undefined;
}

function substitute(s: string, value: (name: string) => string): string {
  return s.replace(TOKEN, (tok, name: string | undefined) => (name ? value(name) : tok === '{{' ? '{' : '}'));
}

/** A parameter's pattern, anchored: the whole value must match (as a JSON schema `pattern` too). */
export const anchoredPattern = (pattern: string) => `^(?:${pattern})$`;

export function paramRegex(pattern: string): RegExp {
  return new RegExp(anchoredPattern(pattern), 'u');
}

export interface ExpandedTodo {
  key: string;
  id: string;
  title: string;
  owner: Owner;
  priority: Priority;
  action?: string;
  /** The id of the workflow gate it names. */
  gate?: string;
  dependsOn: string[];
}
export interface ExpandedGate {
  key: string;
  id: string;
  title: string;
  reason: string;
  /** Ids of the todos it guards: those that name it, and those it lists. */
  guards: string[];
}
export interface ExpandedWorkflow {
  instanceId: string;
  name: string;
  title: string;
  source: WorkflowSource;
  /** Every parameter, defaults filled in. */
  params: Record<string, string>;
  quota: WorkflowQuota;
  todos: ExpandedTodo[];
  gates: ExpandedGate[];
}

const paramError = (name: string, wf: string, msg: string, reason: string) =>
  usageError(`workflow ${wf}: --param ${name}: ${msg}`, { field: `params.${name}`, param: name, reason });

/** The parameters as given, checked, defaults filled in. */
export function resolveParams(wf: WorkflowFile, given: Record<string, string>): Record<string, string> {
  const declared = Object.keys(wf.params);
  for (const name of Object.keys(given))
    if (!Object.hasOwn(wf.params, name))
      throw paramError(
        name,
        wf.name,
        `workflow ${wf.name} has no parameter ${quote(name)} (it takes ${declared.length ? declared.join(', ') : 'none'})`,
        'param_unknown',
      );
  const inActions = paramsInActions(wf);
  const out: Record<string, string> = {};
  for (const [name, p] of Object.entries(wf.params)) {
    const value = Object.hasOwn(given, name) ? given[name]! : p.default;
    if (value === undefined) {
      if (paramRequired(p))
        throw paramError(
          name,
          wf.name,
          `is required (${p.description}): give --param ${name}=VALUE`,
          'param_missing',
        );
      continue;
    }
    const problem = paramValueProblem(name, p, value, inActions.has(name));
    if (problem) throw paramError(name, wf.name, problem.message, problem.reason);
    out[name] = value;
  }
  return out;
}

/** The longest value a parameter takes. */
export const PARAM_VALUE_MAX = 200;

/** A parameter with no default must be given, unless it says `required: false`. */
export const paramRequired = (p: WorkflowParam) => p.default === undefined && p.required !== false;

/** The parameters some todo's action names. */
export function paramsInActions(wf: WorkflowFile): Set<string> {
  return new Set(wf.todos.flatMap((t) => (t.action ? placeholders(t.action) : [])));
}

/**
 * What is wrong with `value` for the parameter `name`, or undefined: the one rule for a value,
 * for `capability run` and the editor's input boxes alike. `inAction`: some action names it.
 */
export function paramValueProblem(
  name: string,
  p: WorkflowParam,
  value: string,
  inAction: boolean,
): { message: string; reason: string } | undefined {
  const problem =
    value === ''
      ? 'must not be empty'
      : value.length > PARAM_VALUE_MAX
        ? `must be at most ${PARAM_VALUE_MAX} characters`
        : textProblem(value);
  if (problem) return { message: `the value ${problem}`, reason: 'param_invalid' };
  if (p.pattern !== undefined && !paramRegex(p.pattern).test(value))
    return { message: `${quote(value)} does not match ${quote(p.pattern)}`, reason: 'param_pattern' };
  // Quoting keeps a value one word, not a word from being read as an option: without a
  // pattern to say otherwise, a value that starts with '-' stays out of commands.
  if (p.pattern === undefined && inAction && value.startsWith('-'))
    return {
      message: `${quote(value)} starts with '-', which a command would read as an option (declare a pattern for ${name} to allow it)`,
      reason: 'param_invalid',
    };
  return undefined;
}

export interface ExpandOptions {
  /** Makes an id from a prefix (default: `newId(prefix, 6)`; the instance's `newId('wf', 8)`). */
  ids?: (prefix: string) => string;
}

/** The workflow `wf` with the parameters `given`: checked, substituted, with fresh ids. */
export function expandWorkflow(
  wf: WorkflowEntry,
  given: Record<string, string>,
  opts: ExpandOptions = {},
): ExpandedWorkflow {
  const w = wf.workflow;
  const params = resolveParams(w, given);
  const mk = opts.ids ?? ((p: string) => (p === 'wf' ? newId('wf', 8) : newId(p, 6)));
  const value = (name: string) => {
    const v = params[name];
    // An optional parameter left out: a placeholder that needs it cannot be filled.
    if (v === undefined)
      throw paramError(name, w.name, `is used by this workflow: give --param ${name}=VALUE`, 'param_missing');
    return v;
  };
  const text = (s: string) => substitute(s, value);
  const todoIds = new Map(w.todos.map((t) => [t.key, mk(t.key)]));
  const gateIds = new Map(w.gates.map((g) => [g.key, mk(g.key)]));
  const todos: ExpandedTodo[] = w.todos.map((t) => {
    const title = text(t.title);
    const action = t.action === undefined ? undefined : substitute(t.action, (n) => shellQuote(value(n)));
    if (title.length > 200)
      throw usageError(
        `workflow ${w.name}: todo ${t.key}'s title is longer than 200 characters with these parameters`,
        { reason: 'param_invalid' },
      );
    if (action !== undefined && action.length > 2000)
      throw usageError(
        `workflow ${w.name}: todo ${t.key}'s action is longer than 2000 characters with these parameters`,
        { reason: 'param_invalid' },
      );
    return {
      key: t.key,
      id: todoIds.get(t.key)!,
      title,
      owner: t.owner,
      priority: t.priority,
      ...(action !== undefined ? { action } : {}),
      ...(t.gate !== undefined ? { gate: gateIds.get(t.gate)! } : {}),
      dependsOn: t.dependsOn.map((k) => todoIds.get(k)!),
    };
  });
  const gates: ExpandedGate[] = w.gates.map((g) => {
    const keys = [...w.todos.filter((t) => t.gate === g.key).map((t) => t.key), ...g.guards];
    return {
      key: g.key,
      id: gateIds.get(g.key)!,
      title: text(g.title).slice(0, 200),
      reason: text(g.reason).slice(0, 2000),
      guards: [...new Set(keys)].map((k) => todoIds.get(k)!),
    };
  });
  return {
    instanceId: mk('wf'),
    name: w.name,
    title: text(w.title).slice(0, 200),
    source: wf.source,
    params,
    quota: w.quota,
    todos,
    gates,
  };
}
