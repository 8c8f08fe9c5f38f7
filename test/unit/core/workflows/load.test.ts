/**
 * Workflow files: the strict schema, the checks a schema cannot make (placeholders, keys, cycles,
 * quoting), each problem reported with its file, line (and column), and field; a bad file never
 * hides the others; a workspace file of a built-in's name overrides it and says so.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  listWorkflows,
  findWorkflow,
  parseWorkflowText,
  workflowJsonSchema,
} from '../../../../src/core/workflows/index';
import { LoopxError } from '../../../../src/core/model/errors';
import { removeTempDirs, tempStore } from '../../../helpers/store';

after(removeTempDirs);

const good = {
  name: 'w',
  title: 'W {x}',
  summary: 'a workflow',
  params: { x: { description: 'x', required: true } },
  todos: [
    { key: 'a', title: 'A', action: 'echo {x}' },
    { key: 'b', title: 'B', dependsOn: ['a'], gate: 'g' },
  ],
  gates: [{ key: 'g', title: 'G', reason: 'because' }],
  quota: { turns: 3 },
};

/** The problem of a declaration written as a file would be (2-space JSON). */
function problemOf(decl: unknown, text = JSON.stringify(decl, null, 2)) {
  const r = parseWorkflowText(text, '.loopx/capabilities/w.json', 'workspace', 'w');
  assert.ok('problem' in r, 'expected a problem');
  return { ...r.problem, text };
}
/** The 1-based line of the first line of `text` that contains `needle`. */
const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

describe('workflow files: schema and checks', () => {
  it('accepts a good file, defaults filled in', () => {
    const r = parseWorkflowText(JSON.stringify(good), 'w.json', 'workspace', 'w');
    assert.ok('entry' in r);
    assert.equal(r.entry.workflow.todos[0]!.owner, 'agent');
    assert.equal(r.entry.workflow.todos[0]!.priority, 'P2');
  });

  it('reports a JSON syntax error with its line and column', () => {
    const text = '{\n  "name": "w",\n  "title": "W",\n}\n';
    const p = problemOf(undefined, text);
    assert.equal(p.line, 4);
    assert.equal(p.column, 1);
    assert.match(p.message, /not valid JSON/);
  });

  it('reports an unknown field with the line of that field (strict schema)', () => {
    const p = problemOf({ ...good, todos: [good.todos[0], { ...good.todos[1], colour: 'red' }] });
    assert.equal(p.field, 'todos.1.colour');
    assert.equal(p.line, lineOf(p.text, '"colour"'));
    assert.match(p.message, /Unrecognized key/);
  });

  it('reports a wrong value with the line of its field', () => {
    const p = problemOf({ ...good, todos: [{ ...good.todos[0], priority: 'P9' }, good.todos[1]] });
    assert.equal(p.field, 'todos.0.priority');
    assert.equal(p.line, lineOf(p.text, '"P9"'));
  });

  const cases: [string, unknown, string, RegExp, string][] = [
    [
      'an unknown placeholder',
      { ...good, todos: [{ key: 'a', title: 'A {y}' }] },
      'todos.0.title',
      /placeholder \{y\} names no parameter/,
      '"A {y}"',
    ],
    [
      'a dependsOn key that does not exist',
      { ...good, todos: [{ key: 'a', title: 'A', dependsOn: ['zz'] }] },
      'todos.0.dependsOn.0',
      /no todo has the key "zz"/,
      '"zz"',
    ],
    [
      'a gate key that does not exist',
      { ...good, todos: [{ key: 'a', title: 'A', gate: 'nope' }] },
      'todos.0.gate',
      /no gate has the key "nope"/,
      '"nope"',
    ],
    [
      'a cycle',
      {
        ...good,
        todos: [
          { key: 'a', title: 'A', dependsOn: ['b'] },
          { key: 'b', title: 'B', dependsOn: ['a'] },
        ],
        gates: [],
      },
      'todos.0.dependsOn',
      /cycle: a -> b -> a/,
      '"dependsOn"',
    ],
    [
      'a placeholder inside quotes',
      { ...good, todos: [{ key: 'a', title: 'A', action: 'git commit -m "fix {x}"' }] },
      'todos.0.action',
      /inside quotes/,
      'git commit',
    ],
    [
      'a name other than the file name',
      { ...good, name: 'other' },
      'name',
      /not the file's name "w"/,
      '"other"',
    ],
    [
      'a bad pattern',
      { ...good, params: { x: { description: 'x', pattern: '(' } } },
      'params.x.pattern',
      /not a regular expression/,
      '"("',
    ],
    [
      'a default that does not match its pattern',
      { ...good, params: { x: { description: 'x', default: 'abc', pattern: '[0-9]+' } } },
      'params.x.default',
      /does not match/,
      '"abc"',
    ],
  ];
  for (const [what, decl, field, message, needle] of cases) {
    it(`reports ${what} with its field and line`, () => {
      const p = problemOf(decl);
      assert.equal(p.field, field);
      assert.match(p.message, message);
      assert.equal(p.line, lineOf(p.text, needle), `line of ${needle}`);
    });
  }

  it('the JSON schema for editors comes from the zod schema and is strict', () => {
    const s = workflowJsonSchema() as {
      properties: Record<string, unknown>;
      additionalProperties?: boolean;
      required: string[];
    };
    assert.equal(s.additionalProperties, false);
    assert.deepEqual(Object.keys(s.properties).sort(), [
      '$schema',
      'description',
      'gates',
      'name',
      'params',
      'quota',
      'summary',
      'title',
      'todos',
    ]);
    assert.ok(s.required.includes('todos'));
  });
});

describe('listWorkflows and findWorkflow', () => {
  function workspace(files: Record<string, string>) {
    const store = tempStore();
    const dir = path.join(store.root, 'capabilities');
    fs.mkdirSync(dir);
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return store;
  }

  it('lists built-ins and workspace files; a bad file is a problem that hides no other', () => {
    const store = workspace({
      'w.json': JSON.stringify(good, null, 2),
      'broken.json': '{ "name": "broken",\n  oops }',
      'notes.txt': 'not a workflow',
    });
    const { workflows, problems } = listWorkflows(store);
    assert.deepEqual(
      workflows.map((w) => [w.name, w.source]),
      [
        ['issue-fix', 'builtin'],
        ['release', 'builtin'],
        ['w', 'workspace'],
      ],
    );
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.file, '.loopx/capabilities/broken.json');
    assert.equal(problems[0]!.line, 2);
    assert.ok(problems[0]!.column! > 1);
  });

  it('a workspace file named like a built-in overrides it, with source workspace-override', () => {
    const store = workspace({ 'release.json': JSON.stringify({ ...good, name: 'release' }) });
    const w = findWorkflow(store, 'release');
    assert.equal(w.source, 'workspace-override');
    assert.equal(w.file, '.loopx/capabilities/release.json');
    assert.equal(listWorkflows(store).workflows.filter((x) => x.name === 'release').length, 1);
  });

  it('finding a bad file is corrupt (exit 6) naming file, line and field; a missing one not_found', () => {
    const store = workspace({
      'w.json': JSON.stringify({ ...good, todos: [{ key: 'a', title: 'A', dependsOn: ['zz'] }] }, null, 2),
    });
    assert.throws(
      () => findWorkflow(store, 'w'),
      (e: unknown) => {
        assert.ok(e instanceof LoopxError);
        assert.equal(e.kind, 'corrupt');
        assert.equal(e.reason, 'workflow_invalid');
        assert.match(
          e.message,
          /^\.loopx\/capabilities\/w\.json \(line \d+, column \d+\): field todos\.0\.dependsOn\.0: no todo has the key "zz"/,
        );
        assert.equal(e.details.field, 'todos.0.dependsOn.0');
        return true;
      },
    );
    assert.throws(
      () => findWorkflow(store, 'nope'),
      (e: unknown) =>
        e instanceof LoopxError && e.kind === 'not_found' && /issue-fix, release/.test(e.message),
    );
  });
});
