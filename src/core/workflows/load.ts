/**
 * Finding the workflows: those shipped with LoopX (builtin/, bundled by esbuild) and the
 * workspace's `.loopx/capabilities/<name>.json`, a workspace file replacing a built-in of the same
 * name. A bad file is reported with where it is wrong (file, line, field) and never hides the
 * others; running it is refused as `corrupt`, like a bad hand-edited policy.json.
 */
import * as path from 'node:path';
import { compareText, corrupt, notFound, quote } from '../model';
import type { Place } from '../store';
import {
  fieldPlaces,
  issueField,
  placeOfField,
  readdirStore,
  readStoreFile,
  syntaxErrorPlace,
} from '../store';
import issueFix from './builtin/issue-fix.json';
import release from './builtin/release.json';
import { paramRegex, placeholders, quotedPlaceholder } from './expand';
import type { WorkflowEntry, WorkflowProblem, WorkflowSource } from './schema';
import { WorkflowFile } from './schema';

/** The workspace's folder of workflow files, under `.loopx/`. */
export const WORKFLOWS_DIR = 'capabilities';

const BUILTIN_TEXTS: readonly unknown[] = [issueFix, release];

/** What a store gives the loader: where `.loopx/` is. */
export interface WorkflowStore {
  root: string;
  workspace: string;
}

type Parsed = { entry: WorkflowEntry } | { problem: WorkflowProblem };

/** Problems a schema cannot see: placeholders, keys that do not exist, cycles, bad patterns. */
function semanticProblems(wf: WorkflowFile): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  const params = new Set(Object.keys(wf.params));
  const todoKeys = new Set<string>();
  wf.todos.forEach((t, i) => {
    if (todoKeys.has(t.key))
      out.push({ path: ['todos', i, 'key'], message: `todo key ${quote(t.key)} is used twice` });
    todoKeys.add(t.key);
  });
  const gateKeys = new Set<string>();
  wf.gates.forEach((g, i) => {
    if (gateKeys.has(g.key))
      out.push({ path: ['gates', i, 'key'], message: `gate key ${quote(g.key)} is used twice` });
    gateKeys.add(g.key);
  });
  const unknownParams = (s: string, p: (string | number)[]) => {
    for (const n of placeholders(s))
      if (!params.has(n))
        out.push({
          path: p,
          message: `placeholder {${n}} names no parameter (params: ${[...params].join(', ') || 'none'})`,
        });
  };
  unknownParams(wf.title, ['title']);
  wf.todos.forEach((t, i) => {
    unknownParams(t.title, ['todos', i, 'title']);
    if (t.action !== undefined) {
      unknownParams(t.action, ['todos', i, 'action']);
      const quoted = quotedPlaceholder(t.action);
      if (quoted)
        out.push({
          path: ['todos', i, 'action'],
          message: `placeholder {${quoted}} is inside quotes: write it as a word of its own, LoopX quotes the value`,
        });
    }
    t.dependsOn.forEach((d, j) => {
      if (!todoKeys.has(d))
        out.push({ path: ['todos', i, 'dependsOn', j], message: `no todo has the key ${quote(d)}` });
      if (d === t.key)
        out.push({ path: ['todos', i, 'dependsOn', j], message: `todo ${t.key} depends on itself` });
    });
    if (t.gate !== undefined && !gateKeys.has(t.gate))
      out.push({ path: ['todos', i, 'gate'], message: `no gate has the key ${quote(t.gate)}` });
  });
  wf.gates.forEach((g, i) => {
    unknownParams(g.title, ['gates', i, 'title']);
    unknownParams(g.reason, ['gates', i, 'reason']);
    g.guards.forEach((k, j) => {
      if (!todoKeys.has(k))
        out.push({ path: ['gates', i, 'guards', j], message: `no todo has the key ${quote(k)}` });
    });
  });
  for (const [name, p] of Object.entries(wf.params)) {
    let re: RegExp | undefined;
    if (p.pattern !== undefined) {
      try {
        re = paramRegex(p.pattern);
      } catch (e) {
        out.push({
          path: ['params', name, 'pattern'],
          message: `not a regular expression: ${(e as Error).message}`,
        });
      }
    }
    if (p.default !== undefined && re && !re.test(p.default))
      out.push({
        path: ['params', name, 'default'],
        message: `the default does not match the pattern ${quote(p.pattern!)}`,
      });
    if (p.required === true && p.default !== undefined)
      out.push({
        path: ['params', name, 'default'],
        message: 'a required parameter has no default: drop one of them',
      });
  }
  const cycle = dependencyCycle(wf);
  if (cycle)
    out.push({
      path: ['todos', cycle.index, 'dependsOn'],
      message: `dependsOn makes a cycle: ${cycle.keys.join(' -> ')}`,
    });
  return out;
}

/** A cycle among the todos' dependsOn, if any: its keys, and the index of the todo it starts at. */
function dependencyCycle(wf: WorkflowFile): { keys: string[]; index: number } | undefined {
  const deps = new Map(wf.todos.map((t) => [t.key, t.dependsOn.filter((d) => d !== t.key)]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (k: string): string[] | undefined => {
    if (state.get(k) === 'done' || !deps.has(k)) return undefined;
    if (state.get(k) === 'visiting') return [...stack.slice(stack.indexOf(k)), k];
    state.set(k, 'visiting');
    stack.push(k);
    for (const d of deps.get(k)!) {
      const c = visit(d);
      if (c) return c;
    }
    stack.pop();
    state.set(k, 'done');
    return undefined;
  };
  for (const t of wf.todos) {
    const c = visit(t.key);
    if (c) return { keys: c, index: wf.todos.findIndex((x) => x.key === c[0]) };
  }
  return undefined;
}

const problemAt = (
  file: string,
  place: Place,
  field: string | undefined,
  message: string,
): WorkflowProblem => ({
  file,
  line: place.line,
  column: place.column,
  ...(field ? { field } : {}),
  message,
});

/** Parses one workflow file's text; `expectName` is the name its file gives it. */
export function parseWorkflowText(
  text: string,
  file: string,
  source: WorkflowSource,
  expectName?: string,
): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const place = syntaxErrorPlace(text, e);
    return { problem: problemAt(file, place, undefined, `not valid JSON: ${(e as Error).message}`) };
  }
  const places = fieldPlaces(text);
  const parsed = WorkflowFile.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    const fieldPath = issueField(first);
    const field = fieldPath.map(String).join('.');
    const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : '';
    return {
      problem: problemAt(
        file,
        placeOfField(places, fieldPath),
        field || undefined,
        `${first.message}${more}`,
      ),
    };
  }
  const wf = parsed.data;
  if (expectName !== undefined && wf.name !== expectName)
    return {
      problem: problemAt(
        file,
        placeOfField(places, ['name']),
        'name',
        `the name ${quote(wf.name)} is not the file's name ${quote(expectName)}: rename one of them`,
      ),
    };
  const [bad] = semanticProblems(wf);
  if (bad)
    return {
      problem: problemAt(file, placeOfField(places, bad.path), bad.path.map(String).join('.'), bad.message),
    };
  return {
    entry: {
      name: wf.name,
      title: wf.title,
      summary: wf.summary,
      ...(wf.description !== undefined ? { description: wf.description } : {}),
      params: wf.params,
      quota: wf.quota,
      source,
      file,
      workflow: wf,
    },
  };
}

let builtins: readonly WorkflowEntry[] | undefined;

/**
 * The workflows shipped with LoopX, checked once per process (they cannot change). A broken one is
 * a bug in LoopX, not the user's to fix.
 */
export function builtinWorkflows(): WorkflowEntry[] {
  builtins ??= BUILTIN_TEXTS.map((json) => {
    const r = parseWorkflowText(JSON.stringify(json, null, 2), 'builtin', 'builtin');
    if ('problem' in r) throw new Error(`built-in workflow: ${r.problem.field}: ${r.problem.message}`);
    return { ...r.entry, file: `builtin:${r.entry.name}` };
  });
  return [...builtins];
}

/** A problem as the message `capability run` refuses with: file, line, column, field, what. */
export function problemText(p: WorkflowProblem): string {
  const where =
    p.line !== undefined ? ` (line ${p.line}${p.column !== undefined ? `, column ${p.column}` : ''})` : '';
  return `${p.file}${where}: ${p.field ? `field ${p.field}: ` : ''}${p.message}`;
}

export interface WorkflowList {
  workflows: WorkflowEntry[];
  problems: WorkflowProblem[];
}

/** Every workflow, built-in then workspace (by name), and what is wrong with the workspace's files. */
export function listWorkflows(store: WorkflowStore): WorkflowList {
  const byName = new Map(builtinWorkflows().map((w) => [w.name, w]));
  const problems: WorkflowProblem[] = [];
  const dir = path.join(store.root, WORKFLOWS_DIR);
  const rel = (name: string) =>
    path.relative(store.workspace, path.join(dir, name)).split(path.sep).join('/');
  let names: string[];
  try {
    names = readdirStore(dir).sort();
  } catch (e) {
    return { workflows: [...byName.values()], problems: [{ file: rel(''), message: (e as Error).message }] };
  }
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = rel(name);
    let text: string;
    try {
      text = readStoreFile(path.join(dir, name), 'utf8');
    } catch (e) {
      problems.push({ file, message: `cannot be read: ${(e as Error).message}` });
      continue;
    }
    const base = name.slice(0, -'.json'.length);
    const source: WorkflowSource =
      byName.get(base)?.source === 'builtin' ? 'workspace-override' : 'workspace';
    const r = parseWorkflowText(text, file, source, base);
    if ('problem' in r) problems.push(r.problem);
    else byName.set(r.entry.name, r.entry);
  }
  const workflows = [...byName.values()].sort((a, b) =>
    a.source === 'builtin' && b.source !== 'builtin'
      ? -1
      : b.source === 'builtin' && a.source !== 'builtin'
        ? 1
        : compareText(a.name, b.name),
  );
  return { workflows, problems };
}

/** One workflow by name; a bad file of that name is `corrupt`, no such workflow `not_found`. */
export function findWorkflow(store: WorkflowStore, name: string): WorkflowEntry {
  const { workflows, problems } = listWorkflows(store);
  const bad = problems.find((p) => p.file.endsWith(`/${name}.json`));
  if (bad)
    throw corrupt(`${problemText(bad)}; fix the file, then run it again`, {
      file: bad.file,
      ...(bad.line !== undefined ? { line: bad.line } : {}),
      ...(bad.field ? { field: bad.field } : {}),
      reason: 'workflow_invalid',
    });
  const wf = workflows.find((w) => w.name === name);
  if (!wf)
    throw notFound(
      `there is no workflow ${quote(name)}: \`loopx capabilities\` lists them (${workflows.map((w) => w.name).join(', ')}); a team adds its own as .loopx/capabilities/${/^[A-Za-z0-9_-]+$/.test(name) ? name : '<name>'}.json`,
      { reason: 'no_workflow' },
    );
  return wf;
}
