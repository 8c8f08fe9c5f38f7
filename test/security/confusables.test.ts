/**
 * Lookalike letters do not pass the policy's patterns (issue 34, finding 7): `sh dеploy.sh prod`
 * with a Cyrillic `е` reads to a person as the gated `sh deploy.sh prod`, but did not match the
 * gate's pattern. A command or pattern with letters of another script mixed into a word, or a
 * word made of lookalikes of Latin letters, is refused where it enters, and never slips past a
 * gate or a denial. Plain text in another script stays allowed. Through the built CLI, as an
 * agent with a shell would try it; reasons are asserted by code.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { Sandbox, loopx, ok, removeTempDirs } from '../helpers/security';
import type { Result } from '../helpers/security';
import { ensurePersonKey, loopxAsPerson, show } from '../helpers/cli';

after(removeTempDirs);

/** `sh deploy.sh prod` with U+0435 CYRILLIC SMALL LETTER IE for the `e` of deploy (character 5). */
const LOOKALIKE = 'sh d\u0435ploy.sh prod';

/** A workspace whose person made a key and signed `policy` (v 1 and a TTL added). */
async function withPolicy(policy: Record<string, unknown>): Promise<Sandbox> {
  const s = new Sandbox();
  ok(await s.run(['init']));
  const o = s.opts();
  await ensurePersonKey(o);
  fs.writeFileSync(
    s.file('.loopx', 'policy.json'),
    JSON.stringify({ v: 1, contractTtlMinutes: 30, ...policy }, null, 2),
  );
  ok(await loopxAsPerson(['policy', 'sign'], o));
  await s.json(['goal', 'create', '--goal-id', 'g', '--title', 'Ship']);
  return s;
}

/** The `{error}` line of a `--json` run that failed. */
function jsonError(r: Result): { kind: string; reason: string; message: string } {
  assert.notEqual(r.code, 0, `expected a refusal, got exit 0: ${r.stdout}`);
  const line = r.stderr.trim().split('\n').at(-1)!;
  return (JSON.parse(line) as { error: { kind: string; reason: string; message: string } }).error;
}

const addTodo = (s: Sandbox, id: string, action: string) =>
  s.run(['--json', 'todo', 'add', '--goal-id', 'g', '--todo-id', id, '--title', id, '--action', action]);

/** The todo ids a should-run contract lists as command actions. */
async function listed(s: Sandbox): Promise<(string | undefined)[]> {
  const r = await s.json(['quota', 'should-run', '--goal-id', 'g']);
  const ic = r.interaction_contract as { cli_channel: { next_cli_actions: string[] } };
  return ic.cli_channel.next_cli_actions.map((a) => /--todo (\S+)/.exec(a)?.[1]);
}

const GATE_DEPLOY = { pattern: 'sh deploy.sh*', gate: 'prod' };

describe('security: lookalike characters', () => {
  it('a todo action with a lookalike letter never slips past the gate of the command it reads as', async () => {
    const s = await withPolicy({ gatedActions: [GATE_DEPLOY] });
    const r = await addTodo(s, 'sneak', LOOKALIKE);
    if (r.code !== 0) {
      assert.equal(jsonError(r).reason, 'confusable_text', show(r));
    } else {
      const todo = (JSON.parse(r.stdout) as { todo: { gate?: string } }).todo;
      assert.equal(todo.gate, 'prod', `the lookalike action got no gate:\n${show(r)}`);
    }
    ok(await addTodo(s, 'harmless', 'echo harmless'));
    assert.deepEqual(
      await listed(s),
      ['harmless'],
      'only the harmless action is listed before a person approves',
    );
  });

  it('a todo action with a lookalike letter is refused where it enters, naming the character', async () => {
    const s = await withPolicy({ gatedActions: [GATE_DEPLOY] });
    const e = jsonError(await addTodo(s, 'sneak', LOOKALIKE));
    assert.equal(e.reason, 'confusable_text');
    assert.match(e.message, /U\+0435 CYRILLIC SMALL LETTER IE at character 5/);
  });

  it('a gate pattern with a lookalike letter gates every command rather than none', async () => {
    const s = await withPolicy({ gatedActions: [{ pattern: 'sh d\u0435ploy.sh*', gate: 'prod' }] });
    const out = await s.json([
      'todo',
      'add',
      '--goal-id',
      'g',
      '--todo-id',
      'd',
      '--title',
      'd',
      '--action',
      'sh deploy.sh prod',
    ]);
    assert.equal((out.todo as { gate?: string }).gate, 'prod', JSON.stringify(out));
  });

  it('an allow pattern with a lookalike letter is refused with its reason code, naming the character', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    const e = jsonError(await s.run(['--json', 'policy', 'allow', '\u0441at *']));
    assert.equal(e.reason, 'confusable_text', JSON.stringify(e));
    assert.match(e.message, /U\+0441 CYRILLIC SMALL LETTER ES at character 1/);
  });

  it('the hook allows no lookalike command by pattern', async () => {
    const s = new Sandbox();
    ok(await s.run(['init']));
    fs.writeFileSync(s.file('d\u0435ploy.sh'), 'echo deployed\n');
    for (const command of [
      `cat d\u0435ploy.sh`,
      'ls \u0455\u04bb',
      'cat \uff52\uff45\uff41\uff44\uff4d\uff45',
    ]) {
      const r = await loopx(['hook', 'pre-tool-use'], {
        cwd: s.dir,
        env: { LOOPX_CONFIG_DIR: s.config },
        input: JSON.stringify({
          session_id: 's',
          cwd: s.dir,
          hook_event_name: 'PreToolUse',
          tool_name: 'Bash',
          tool_input: { command },
        }),
      });
      assert.equal(r.code, 2, `${command}\n${show(r)}`);
      assert.doesNotMatch(r.stdout, /"allow"/, `${command}\n${show(r)}`);
    }
  });

  it('plain text in another script stays allowed: a Russian title, a Russian commit message', async () => {
    const s = await withPolicy({ gatedActions: [GATE_DEPLOY] });
    const r = await s.json([
      'todo',
      'add',
      '--goal-id',
      'g',
      '--todo-id',
      'ru',
      '--title',
      'Исправить ошибку в отчёте',
      '--action',
      "git commit -m 'Исправлена ошибка в отчёте'",
    ]);
    assert.equal((r.todo as { gate?: string }).gate, undefined, JSON.stringify(r));
    assert.deepEqual(await listed(s), ['ru']);
  });
});
