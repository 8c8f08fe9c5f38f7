/**
 * `loopx export` on the built CLI: the Markdown report's sections, hostile titles and reasons
 * rendered inert (checked by rendering the report with a real CommonMark renderer, raw HTML on),
 * the JSON export (`--json`) as the whole history, and `--output`: atomic, never into `.loopx/`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ExportDoc, GoalStatusDoc } from '../../src/core/index';
import { ExportFileOutput } from '../../src/core/views/output-schemas';
import { Ws, loopx, removeTempDirs, ok, fails, json } from '../helpers/cli';
import { renderMarkdown } from '../helpers/markdown';

after(removeTempDirs);

const render = renderMarkdown;

const HOSTILE_TITLE =
  'Pwn <script>alert(1)</script> [click](http://evil.test) ![t](http://evil.test/i.png) **bold** | `tick`';
const HOSTILE_REASON =
  'Looks fine <img src=x onerror=alert(1)>\n# Approved already\n<a href="http://evil.test">sign here</a>';
const HOSTILE_ACTION = 'echo `whoami` <b>x</b> ``` done';

describe('export', { concurrency: 1 }, () => {
  const ws = new Ws();
  const as = (agent: string, ...args: string[]) => loopx(args, { cwd: ws.dir, env: { LOOPX_AGENT: agent } });
  let runId = '';

  before(async () => {
    ok(
      await ws.run(
        'goal',
        'create',
        '--title',
        HOSTILE_TITLE,
        '--goal-id',
        'g',
        '--description',
        'Ship it\n1. first\n<iframe src=x>',
      ),
    );
    ok(await ws.addTodo('g', 'tests', 'Run the tests', 'npm test'));
    ok(await ws.addTodo('g', 'ship', `Deploy ${HOSTILE_TITLE}`, HOSTILE_ACTION));
    runId = json(
      await as('codex', '--json', 'quota', 'should-run', '--goal-id', 'g'),
      z.object({ run_id: z.string() }),
    ).run_id;
    ok(
      await as(
        'codex',
        'gate',
        'request',
        '--goal-id',
        'g',
        '--gate-id',
        'prod',
        '--title',
        HOSTILE_TITLE,
        '--reason',
        HOSTILE_REASON,
        '--guards',
        'ship',
      ),
    );
    ok(
      await as(
        'codex',
        'evidence',
        'add',
        '--goal-id',
        'g',
        '--run-id',
        runId,
        '--todo-id',
        'tests',
        '--kind',
        'test',
        '--summary',
        '42 passed <b>ok</b>',
        '--exit-code',
        '0',
      ),
    );
    ok(await as('codex', 'summary_all', '--goal-id', 'g'));
    ok(
      await ws.person(
        'reward',
        'add',
        '--goal-id',
        'g',
        '--run-id',
        runId,
        '--score',
        '0.5',
        '--comment',
        'fine [link](http://evil.test)',
      ),
    );
  });

  it('the Markdown report (the default): objective, quota, todos, gates and decisions, runs with evidence and rewards', async () => {
    const md = ok(await ws.run('export', '--goal-id', 'g')).stdout;
    const headings = md.split('\n').filter((l) => /^#/.test(l));
    assert.deepEqual(
      headings.map((h) => h.replace(/[:\s].*$/, '')).filter((h) => h !== '#'),
      ['##', '##', '##', '##', '###', '##', '###'],
      `only the report's own headings:\n${headings.join('\n')}`,
    );
    for (const h of ['## Objective', '## Quota and spend', '## Todos', '## Gates', '## Runs'])
      assert.ok(md.includes(`\n${h}\n`), `${h} in\n${md}`);
    assert.match(md, /^- \[ \] P2 `tests` Run the tests \(open\): `npm test`$/m);
    assert.match(md, /^ {2}- Evidence `ev-\S+` test, todo `tests`, exit 0: 42 passed \\<b\\>ok\\<\\\/b\\>$/m);
    assert.match(md, new RegExp(`^### Run \`${runId}\`: codex, succeeded$`, 'm'));
    assert.match(md, /^- Spent: 1 turn$/m);
    // A bare URL is escaped too, so no renderer links it (GFM autolinks need `:` and `.` as written).
    assert.match(
      md,
      /^ {2}- 0\.5 by user\\:\S+ \(.* UTC\): fine \\\[link\\\]\\\(http\\:\\\/\\\/evil\\\.test\\\)$/m,
    );
    assert.match(md, /^- Reason \(the agent’s words\):$/m);
    assert.match(md, /^- Waiting for a person’s decision$/m);
    assert.match(md, /^- Budgets \(life\): turns 1\/200$/m);
  });

  it('hostile titles, reasons and commands are inert: no HTML, link, image or heading of theirs renders', async () => {
    const md = ok(await ws.run('export', '--goal-id', 'g')).stdout;
    const html = render(md);
    assert.doesNotMatch(html, /<(script|img|iframe|b)\b/i, html);
    assert.doesNotMatch(html, /<a\b/i, 'no link');
    assert.doesNotMatch(html, /<strong>/, 'no emphasis from a title');
    // Their words are still there, as text a reader sees.
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), html);
    assert.ok(html.includes('[click](http://evil.test)'));
    assert.ok(html.includes('# Approved already'), 'the reason’s "heading" is a line of its quote');
    // The command is one code span holding it whole, backticks and all.
    assert.ok(
      html.includes(`<code>${HOSTILE_ACTION.replace(/</g, '&lt;').replace(/>/g, '&gt;')}</code>`),
      html,
    );
    const h = html.match(/<h[1-6]>[^<]*/g) ?? [];
    assert.equal(h.length, 8, `the report's headings only: ${h.join(' | ')}`);
  });

  it('--json (or --format json): loopx.export/1, the whole history: the goal document and every event as log gives it', async () => {
    const doc = await ws.json(ExportDoc.strict(), 'export', '--goal-id', 'g');
    const viaFormat = json(await ws.run('--format', 'json', 'export', '--goal-id', 'g'), ExportDoc);
    assert.deepEqual({ ...viaFormat, exported_at: '' }, { ...doc, exported_at: '' });
    const status = await ws.json(GoalStatusDoc, 'status', '--goal-id', 'g');
    assert.deepEqual({ ...doc.goal, attention: [] }, { ...status, attention: [] });
    const log = JSON.parse(ok(await ws.run('--json', 'log', '--goal-id', 'g')).stdout) as unknown[];
    assert.deepEqual(doc.events, log, 'every event, exactly as `loopx log --json` gives it');
    assert.equal(doc.goal.title, HOSTILE_TITLE, 'JSON keeps the text as it is');
    assert.deepEqual(
      doc.runs.map((r) => r.id),
      [runId],
    );
    assert.deepEqual(
      doc.gates.map((g) => [g.id, g.reason]),
      [['prod', HOSTILE_REASON]],
    );
    assert.equal(doc.evidence.length, 1);
    assert.equal(doc.rewards.length, 1);
    // A round trip: what was written is what a reader gets back.
    assert.deepEqual(JSON.parse(JSON.stringify(doc)), doc);
  });

  it('--output writes the file atomically and says where; into .loopx/ (or through a link into it) is refused', async () => {
    const r = ok(await ws.run('export', '--goal-id', 'g', '--output', 'report.md'));
    assert.equal(r.stdout, `wrote the Markdown report of goal g to ${ws.file('report.md')}\n`);
    const when = (md: string) => md.replace(/exported \d{4}-\d\d-\d\d \d\d:\d\d UTC/, 'exported (time)');
    assert.equal(
      when(fs.readFileSync(ws.file('report.md'), 'utf8')),
      when(ok(await ws.run('export', '--goal-id', 'g')).stdout),
    );
    const j = json(
      await ws.run('--json', 'export', '--goal-id', 'g', '--output', 'goal.json'),
      ExportFileOutput,
    );
    assert.deepEqual([j.goal_id, j.format], ['g', 'json']);
    assert.equal(j.file, ws.file('goal.json'));
    assert.equal(ExportDoc.parse(JSON.parse(fs.readFileSync(j.file, 'utf8'))).events.length, j.events);
    assert.equal(fs.statSync(j.file).size, j.bytes);
    // Atomic: a temp file renamed into place, none left behind.
    assert.deepEqual(
      fs.readdirSync(ws.dir).filter((n) => n.includes('.tmp-')),
      [],
    );

    const before = fs.readdirSync(ws.file('.loopx'));
    fails(
      await ws.run('export', '--goal-id', 'g', '--output', '.loopx/report.md'),
      2,
      /--output .* is inside a \.loopx folder/,
    );
    fails(
      await ws.run('export', '--goal-id', 'g', '--output', '.loopx/goals/g/events/w-x.jsonl'),
      2,
      /inside a \.loopx folder/,
    );
    fs.symlinkSync(ws.file('.loopx'), ws.file('store-link'));
    fails(
      await ws.run('export', '--goal-id', 'g', '--output', 'store-link/x.md'),
      2,
      /inside a \.loopx folder/,
    );
    assert.deepEqual(fs.readdirSync(ws.file('.loopx')), before, 'nothing written there');
    fails(
      await ws.run('export', '--goal-id', 'g', '--output', 'no/such/dir/x.md'),
      2,
      /folder .*no\/such\/dir does not exist \(--output\)/,
    );
    fails(await ws.run('export', '--goal-id', 'ghost'), 3, /no goal "ghost".*\(--goal-id\)/);
    assert.ok(!fs.existsSync(path.join(ws.dir, 'no')));
  });
});
