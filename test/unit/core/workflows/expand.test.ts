/**
 * Expanding a workflow: parameters checked (required, defaults, patterns, the one-line rule) and
 * placed into titles as text and into actions shell-quoted, so that a value is exactly one word
 * of the command, whatever it holds (proved with the core's own shell lexer).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  expandWorkflow,
  parseWorkflowText,
  builtinWorkflows,
  placeholders,
} from '../../../../src/core/workflows/index';
import type { WorkflowEntry } from '../../../../src/core/workflows/index';
import { shellWords } from '../../../../src/core/shell/lexer';
import { ID_PATTERN } from '../../../../src/core/model/ids';
import { LoopxError } from '../../../../src/core/model/errors';

/** A workspace workflow from a declaration, validated as a file would be. */
function wf(decl: Record<string, unknown>): WorkflowEntry {
  const r = parseWorkflowText(
    JSON.stringify({ name: 'w', title: 'W', summary: 'a test workflow', ...decl }, null, 2),
    'w.json',
    'workspace',
    'w',
  );
  if ('problem' in r) throw new Error(`${r.problem.field}: ${r.problem.message}`);
  return r.entry;
}

const echo = wf({
  params: {
    msg: { description: 'what to say', required: true },
    who: { description: 'to whom', default: 'world' },
  },
  todos: [
    { key: 'say', title: 'Say {msg} to {who}', action: 'echo {msg} --to={who}' },
    { key: 'after', title: 'Then {{literally}}', dependsOn: ['say'] },
  ],
});

function refusedParam(fn: () => unknown, reason: string, message: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof LoopxError, String(e));
    assert.equal(e.kind, 'usage');
    assert.equal(e.reason, reason);
    assert.match(e.message, message);
    return true;
  });
}

describe('expandWorkflow: hostile parameter values stay one word', () => {
  const HOSTILE = [
    '$(touch /tmp/pwned)',
    '`touch /tmp/pwned`',
    "it's; rm -rf ~",
    '"; rm -rf ~; echo "',
    '1; rm -rf ~',
    'a && b || c | d > e < f & g',
    '$HOME ${PATH} ~ * ? [a]',
    "'\\''",
    '{who}',
    'plain',
    'tab\tinside',
  ];
  for (const value of HOSTILE) {
    it(`keeps ${JSON.stringify(value)} as exactly one word of the command`, () => {
      if (value.includes('\t')) {
        refusedParam(
          () => expandWorkflow(echo, { msg: value }),
          'param_invalid',
          /--param msg: the value must not contain control characters/,
        );
        return;
      }
      const x = expandWorkflow(echo, { msg: value });
      const words = shellWords(x.todos[0]!.action!);
      assert.deepEqual(words, ['echo', value, '--to=world'], x.todos[0]!.action);
      // Titles are text: the value as it is, never expanded again.
      assert.equal(x.todos[0]!.title, `Say ${value} to world`);
    });
  }

  it('does not expand a placeholder inside a value, nor the literal {{...}}', () => {
    const x = expandWorkflow(echo, { msg: '{who}', who: 'x' });
    assert.deepEqual(shellWords(x.todos[0]!.action!), ['echo', '{who}', '--to=x']);
    assert.equal(x.todos[1]!.title, 'Then {literally}');
  });

  it('refuses newlines, control and invisible characters, empty and overlong values', () => {
    for (const v of ['a\nb', 'a\rb', 'a\u001b[31mb', 'a\u202eb'])
      refusedParam(
        () => expandWorkflow(echo, { msg: v }),
        'param_invalid',
        /--param msg: the value must not contain/,
      );
    refusedParam(() => expandWorkflow(echo, { msg: '' }), 'param_invalid', /must not be empty/);
    refusedParam(() => expandWorkflow(echo, { msg: 'x'.repeat(201) }), 'param_invalid', /at most 200/);
  });

  it("refuses a value that would read as an option unless the parameter's pattern allows it", () => {
    refusedParam(
      () => expandWorkflow(echo, { msg: '--upload-pack=evil' }),
      'param_invalid',
      /starts with '-'/,
    );
    const dashed = wf({
      params: { flag: { description: 'a flag', required: true, pattern: '--(verbose|quiet)' } },
      todos: [{ key: 'a', title: 'A', action: 'tool {flag}' }],
    });
    assert.deepEqual(shellWords(expandWorkflow(dashed, { flag: '--quiet' }).todos[0]!.action!), [
      'tool',
      '--quiet',
    ]);
  });
});

describe('expandWorkflow: parameters', () => {
  it('requires required parameters, fills defaults, refuses unknown ones, naming each', () => {
    refusedParam(() => expandWorkflow(echo, {}), 'param_missing', /--param msg: is required \(what to say\)/);
    refusedParam(
      () => expandWorkflow(echo, { msg: 'hi', nope: 'x' }),
      'param_unknown',
      /--param nope: .*no parameter "nope" \(it takes msg, who\)/,
    );
    const x = expandWorkflow(echo, { msg: 'hi' });
    assert.deepEqual(x.params, { msg: 'hi', who: 'world' });
    assert.equal(x.todos[0]!.action, 'echo hi --to=world');
  });

  it('checks the pattern against the whole value (anchored)', () => {
    const [issueFix] = builtinWorkflows();
    assert.equal(issueFix!.name, 'issue-fix');
    refusedParam(
      () => expandWorkflow(issueFix!, { issue: '1; rm -rf ~' }),
      'param_pattern',
      /--param issue: "1; rm -rf ~" does not match/,
    );
    refusedParam(() => expandWorkflow(issueFix!, { issue: '12a' }), 'param_pattern', /does not match/);
    refusedParam(() => expandWorkflow(issueFix!, { issue: 'a12' }), 'param_pattern', /does not match/);
    const x = expandWorkflow(issueFix!, { issue: '17' });
    assert.equal(x.todos[0]!.action, 'gh issue view 17 --comments');
    assert.equal(x.title, 'Fix issue #17');
    const release = builtinWorkflows().find((w) => w.name === 'release')!;
    assert.equal(
      expandWorkflow(release, { version: '1.4.0-rc.1' }).todos.find((t) => t.key === 'tag')!.action,
      'npm version 1.4.0-rc.1 --message v1.4.0-rc.1',
    );
    refusedParam(() => expandWorkflow(release, { version: '1.4' }), 'param_pattern', /does not match/);
  });

  it('gives fresh ids under the id rule, and maps dependsOn and gates to them', () => {
    const [issueFix] = builtinWorkflows();
    const a = expandWorkflow(issueFix!, { issue: '17' });
    const b = expandWorkflow(issueFix!, { issue: '17' });
    for (const id of [a.instanceId, ...a.todos.map((t) => t.id), ...a.gates.map((g) => g.id)])
      assert.match(id, ID_PATTERN);
    assert.notEqual(a.instanceId, b.instanceId);
    assert.notEqual(a.todos[0]!.id, b.todos[0]!.id);
    const id = (key: string) => a.todos.find((t) => t.key === key)!.id;
    assert.deepEqual(a.todos.find((t) => t.key === 'fix')!.dependsOn, [id('reproduce')]);
    const merge = a.todos.find((t) => t.key === 'merge')!;
    assert.equal(merge.gate, a.gates[0]!.id);
    assert.deepEqual(a.gates[0]!.guards, [merge.id]);
    assert.deepEqual(a.quota, { turns: 12, tokens: 400000, costUsd: 5 });
  });

  it('lists the placeholders of a text, each once, not the escaped braces', () => {
    assert.deepEqual(placeholders('{a} {b} {a} {{c}} { d } {1x}'), ['a', 'b']);
  });
});
