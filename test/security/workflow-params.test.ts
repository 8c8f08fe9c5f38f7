/**
 * A hostile workflow parameter cannot inject a command: an agent runs a workspace workflow whose
 * action takes its parameter, with values that would run a command if pasted into a shell, then
 * runs the contract's action exactly as an executor does (`sh -c` on the exec line). The injected
 * command never runs: its marker file is never created, and the value arrives as one argument.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox, removeTempDirs } from '../helpers/security';
import { loopxOnPath, sh, show } from '../helpers/cli';

after(removeTempDirs);

const workflow = {
  name: 'say',
  title: 'Say {msg}',
  summary: 'Print one message.',
  params: { msg: { description: 'the message', required: true } },
  todos: [{ key: 'say', title: 'Say {msg}', action: 'printf [%s]\\n {msg}' }],
};

describe('workflow parameters', () => {
  const sb = new Sandbox();
  const marker = sb.file('pwned');
  const HOSTILE = [
    `$(touch ${marker})`,
    `\`touch ${marker}\``,
    `x; touch ${marker}`,
    `x' ; touch ${marker}; echo '`,
    `x" && touch ${marker} && echo "`,
    `x | touch ${marker}`,
    `{msg}$(touch ${marker})`,
  ];

  it('an agent’s hostile value never runs: the contract action prints it as one argument', async () => {
    fs.mkdirSync(sb.file('.loopx', 'capabilities'), { recursive: true });
    await sb.json(['goal', 'create', '--goal-id', 'g0', '--title', 'Init']);
    fs.writeFileSync(sb.file('.loopx', 'capabilities', 'say.json'), JSON.stringify(workflow, null, 2));
    const env = { PATH: `${loopxOnPath()}${path.delimiter}${process.env.PATH}`, LOOPX_CONFIG_DIR: sb.config };
    for (const [i, value] of HOSTILE.entries()) {
      const g = `g${i + 1}`;
      await sb.json(['goal', 'create', '--goal-id', g, '--title', `Attack ${i}`]);
      // The agent (no terminal, LOOPX_AGENT set) runs the workflow with the hostile value.
      const run = await sb.json(['capability', 'run', 'say', '--goal-id', g, '--param', `msg=${value}`], {
        LOOPX_AGENT: 'mallory',
      });
      assert.equal((run.todo_ids as string[]).length, 1);
      const sr = await sb.json(['quota', 'should-run', '--goal-id', g], { LOOPX_AGENT: 'mallory' });
      const [line] = (sr.interaction_contract as { cli_channel: { next_cli_actions: string[] } }).cli_channel
        .next_cli_actions;
      assert.ok(line, `a contract action for ${value}: ${JSON.stringify(sr)}`);
      const r = await sh(line, { cwd: sb.dir, env: { ...env, LOOPX_AGENT: 'mallory' } });
      assert.equal(r.code, 0, show(r));
      assert.ok(!fs.existsSync(marker), `the injected command ran for ${JSON.stringify(value)}`);
      assert.ok(r.stdout.includes(`[${value}]`), `the value is printed as one argument: ${show(r)}`);
    }
  });
});
