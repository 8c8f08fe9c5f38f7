/**
 * What the hooks refused an agent, and what a run spent by kind of token, on `status`: the built
 * `loopx hook pre-tool-use` refuses and records (as Claude Code calls it, JSON on stdin), `loopx
 * hook stop` counts a transcript, and `loopx status --goal-id` shows both, in text and JSON, as
 * `loopx status` shows the count per goal.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GoalStatusDoc, StatusDoc } from '../../src/core/index';
import { Ws, loopx, ok, removeTempDirs, show, tempDir } from '../helpers/cli';
import type { Result } from '../helpers/cli';

after(removeTempDirs);

const AGENT = 'codex';
const GATE_APPROVE = 'loopx gate approve --goal-id g --gate-id ship';

describe('status shows what the hooks refused', { concurrency: 1 }, () => {
  const ws = new Ws();
  const hook = (event: string, payload: object): Promise<Result> =>
    loopx(['hook', event, '--goal-id', 'g'], {
      cwd: ws.dir,
      env: { LOOPX_AGENT: AGENT },
      input: JSON.stringify({ cwd: ws.dir, ...payload }),
    });
  const bash = (command: string) => hook('pre-tool-use', { tool_name: 'Bash', tool_input: { command } });

  before(async () => {
    ok(await ws.run('init'));
    ok(await ws.run('goal', 'create', '--goal-id', 'g', '--title', 'Ship it'));
    ok(
      await ws.run(
        'todo',
        'add',
        '--goal-id',
        'g',
        '--todo-id',
        'test',
        '--title',
        'test',
        '--action',
        'npm test',
      ),
    );
    for (const command of ['rm -rf build', 'make deploy \\\n  --force', GATE_APPROVE]) {
      const r = await bash(command);
      assert.equal(r.code, 2, `refused: ${show(r)}`);
    }
  });

  it('--json lists them newest first with their code, and the agent that tried a person’s decision needs a look', async () => {
    const doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'g');
    assert.equal(doc.denied_total, 3);
    assert.deepEqual(
      doc.denied.map((d) => [d.agent, d.tool, d.command, d.code, d.enforced]),
      [
        [AGENT, 'Bash', GATE_APPROVE, 'human_only', true],
        [AGENT, 'Bash', 'make deploy \\\n  --force', 'no_contract', true],
        [AGENT, 'Bash', 'rm -rf build', 'no_contract', true],
      ],
    );
    assert.match(doc.denied[0]!.reason, /a person's decision/);
    assert.match(doc.denied[0]!.event_id, /^[\w-]+$/);
    assert.deepEqual(
      doc.attention.filter((a) => a.kind === 'denied').map((a) => [a.id, a.title, a.detail]),
      [
        [
          AGENT,
          'codex tried to make a person’s decision',
          `3 refusals in the last hour; the latest: ${GATE_APPROVE}`,
        ],
      ],
    );
    const all = await ws.json(StatusDoc, 'status');
    assert.deepEqual(
      all.goals.map((g) => [g.id, g.denied]),
      [['g', 3]],
    );
  });

  it('in text: a Refused section, one refusal in two aligned lines (when, agent, what; why), and the count per goal', async () => {
    const text = ok(await ws.run('status', '--goal-id', 'g')).stdout;
    const lines = text.split('\n');
    const at = lines.indexOf('refused (3 in all):');
    assert.ok(at > 0, text);
    const stamp = /^ {2}\d{4}-\d\d-\d\d \d\d:\d\d UTC {2}codex {2}/;
    assert.match(lines[at + 1]!, stamp);
    assert.ok(lines[at + 1]!.endsWith(`refused: $ ${GATE_APPROVE}`), lines[at + 1]);
    assert.match(
      lines[at + 2]!,
      /^ {6}why \(human_only\): LoopX: `loopx gate approve .*` is a person's decision/,
    );
    assert.ok(lines[at + 3]!.endsWith('refused: $ make deploy \\ --force'), 'on one line');
    assert.match(lines[at + 4]!, /^ {6}why \(no_contract\): LoopX: .*there is no active contract/);
    assert.ok(lines[at + 5]!.endsWith('refused: $ rm -rf build'));
    assert.match(
      text,
      /^ {2}! denied +codex +codex tried to make a person’s decision: 3 refusals in the last hour/m,
    );
    assert.match(ok(await ws.run('status')).stdout, /^active .* g {2}Ship it {2}\(3 refused\)$/m);
  });

  it('observe mode: what it let through reads "would refuse (observe mode)"', async () => {
    const policy = ws.file('.loopx', 'policy.json');
    fs.writeFileSync(
      policy,
      JSON.stringify({ ...JSON.parse(fs.readFileSync(policy, 'utf8')), enforcement: 'observe' }),
    );
    ok(await ws.person('policy', 'sign'));
    const r = await bash('npm publish');
    assert.equal(r.code, 0, `let through: ${show(r)}`);
    const doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'g');
    assert.deepEqual(
      [doc.denied[0]!.command, doc.denied[0]!.enforced, doc.denied_total],
      ['npm publish', false, 4],
    );
    const text = ok(await ws.run('status', '--goal-id', 'g')).stdout;
    assert.match(text, /^refused \(4 in all\):$/m);
    assert.match(text, /^ {2}\S+ \S+ UTC {2}codex {2}would refuse \(observe mode\): \$ npm publish$/m);
  });

  it('a run’s tokens by kind, from the transcript the Stop hook read, in JSON and in text', async () => {
    const file = path.join(tempDir('loopx-transcript-'), 's1.jsonl');
    const usage = {
      input_tokens: 1200,
      output_tokens: 300,
      cache_creation_input_tokens: 5000,
      cache_read_input_tokens: 20000,
    };
    fs.writeFileSync(
      file,
      JSON.stringify({
        type: 'assistant',
        sessionId: 's1',
        message: { id: 'msg_1', model: 'claude-sonnet-4-5', role: 'assistant', usage },
      }) + '\n',
    );
    ok(await hook('stop', { session_id: 's1', transcript_path: file, hook_event_name: 'Stop' }));
    const doc = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'g');
    assert.deepEqual(doc.runs[0]!.usage, { input: 1200, output: 300, cache_write: 5000, cache_read: 20000 });
    const text = ok(await ws.run('status', '--goal-id', 'g')).stdout;
    assert.match(
      text,
      /^ {2}run-\S+ {2}codex {2}abandoned {2}0 evidence\n {6}tokens: 1,200 input, 300 output, 5,000 cache write, 20,000 cache read$/m,
    );
  });
});
