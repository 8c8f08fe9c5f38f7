/**
 * The bodies each channel receives (reach/formats.ts), with hostile text from the store: a command
 * holding Slack's mention and link syntax, a backtick run, a bidi override and a line break stays
 * inert in every format, and every command arrives whole.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Notice } from '../../../../src/core/index';
import {
  desktopCommand,
  desktopMessage,
  genericBody,
  NoticeBody,
  slackBody,
  webhookRequest,
} from '../../../../src/core/index';

const RLO = '\u202e';
const HOSTILE_COMMAND = `echo "<!channel>" <https://evil.example|click> \`\`\`x\`\`\` ${RLO}gpj.exe\nrm -rf /tmp/x`;

const notice: Notice = {
  key: `gate-${'a'.repeat(40)}`,
  kind: 'gate',
  workspace: { name: `shop <!here>`, path: '/home/p/shop' },
  goal: { id: 'g', title: `Ship ${RLO}it\nnow` },
  id: 'prod',
  title: 'Deploy <@U123> & go',
  detail: `release day <!channel>\nsee <https://evil.example|here>`,
  requested_by: 'agent codex at the command line (unsigned)',
  commands: [HOSTILE_COMMAND, 'make deploy'],
  link: 'http://localhost:8080/decide/0123456789abcdef0123456789abcdef/g/prod',
  at: '2026-11-30T10:00:00.000Z',
};

/** Every string in a JSON value. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

describe('notice formats', () => {
  it('generic: every fact as a field, commands whole, bidi and controls gone, line breaks of commands kept', () => {
    const body = NoticeBody.parse(genericBody(notice));
    assert.equal(body.schema, 'loopx.notice/1');
    assert.deepEqual(body.workspace, { name: 'shop <!here>', path: '/home/p/shop' });
    assert.deepEqual(body.goal, { id: 'g', title: 'Ship it now' });
    assert.equal(body.requested_by, notice.requested_by);
    assert.equal(body.link, notice.link);
    assert.deepEqual(body.commands, [HOSTILE_COMMAND.replace(RLO, ''), 'make deploy']);
    for (const s of strings(body))
      assert.doesNotMatch(s, /[\u202a-\u202e\u2066-\u2069\u0000-\u0009\u000b-\u001f]/u);
  });

  it('slack: no store text can make a mention or a link; commands are code blocks nothing ends early', () => {
    const body = slackBody(notice);
    const all = [body.text, ...strings(body.blocks)];
    const joined = all.join('\n');
    // The only `<` left in the message is LoopX's own link to decide.
    const opens = [...joined.matchAll(/</g)].length;
    assert.equal(opens, 1, joined);
    assert.ok(joined.includes(`<${notice.link}|Decide in LoopX>`));
    assert.ok(!joined.includes('<!channel>') && !joined.includes('<!here>') && !joined.includes('<@U123>'));
    assert.ok(joined.includes('&lt;!channel&gt;'));
    assert.ok(joined.includes('&lt;https://evil.example|click&gt;'));
    assert.doesNotMatch(joined, /[\u202a-\u202e]/u);
    // Each command is one code block whose only fences are its own.
    const blocks = all.filter((s) => s.startsWith('```'));
    const first = blocks.find((b) => b.includes('echo'))!;
    assert.equal([...first.matchAll(/```/g)].length, 2, first);
    assert.ok(first.includes('ˋˋˋxˋˋˋ'), first);
    assert.ok(first.includes('\nrm -rf /tmp/x'), 'the command’s own line break is kept');
    assert.ok(blocks.some((b) => b === '```\nmake deploy\n```'));
    // One-line store text sits in code spans too: nothing in it links or formats.
    assert.ok(joined.includes('`Deploy &lt;@U123&gt; &amp; go`'));
  });

  it('slack: a long command is split over several blocks Slack accepts, none lost', () => {
    const long = 'x'.repeat(7000);
    const body = slackBody({ ...notice, commands: [long] });
    const texts = strings(body.blocks).filter((s) => s.startsWith('```'));
    for (const t of texts) assert.ok(t.length <= 3000, `${t.length}`);
    assert.equal(
      texts
        .map((t) => t.replace(/```\n?|\n```/g, ''))
        .join('')
        .split('x').length -
        1 >=
        7000,
      true,
    );
  });

  it('ntfy: JSON publishing to the server root with the topic, a click link and the facts as text', () => {
    const r = webhookRequest('ntfy', 'http://127.0.0.1:8090/sub/my-topic', notice);
    assert.equal(r.url, 'http://127.0.0.1:8090/sub/');
    const body = JSON.parse(r.body) as Record<string, unknown>;
    assert.equal(body.topic, 'my-topic');
    assert.equal(body.click, notice.link);
    assert.deepEqual(body.tags, ['loopx', 'gate']);
    assert.equal(body.title, 'LoopX: gate prod needs your decision');
    const message = body.message as string;
    assert.ok(message.includes(`$ ${HOSTILE_COMMAND.replace(RLO, '')}`), message);
    assert.ok(message.includes('$ make deploy'));
    assert.ok(message.includes('Asked by: agent codex at the command line (unsigned)'));
    assert.doesNotMatch(message, /\u202e/u);
  });

  it('desktop: markup characters written as entities; the program gets an argument list, never a shell', () => {
    const m = desktopMessage(notice);
    assert.equal(m.title, 'LoopX: gate prod needs your decision');
    assert.ok(!/[<>]/.test(m.body), m.body);
    assert.ok(m.body.includes('&lt;!channel&gt;'));
    assert.ok(m.body.includes(notice.link));
    const linux = desktopCommand('linux', m.title, m.body);
    assert.deepEqual(linux, { file: 'notify-send', args: ['--app-name=LoopX', '--', m.title, m.body] });
    const mac = desktopCommand('darwin', m.title, m.body) as { file: string; args: string[] };
    assert.equal(mac.file, 'osascript');
    assert.deepEqual(mac.args.slice(-2), [m.title, m.body]);
    assert.ok(!mac.args.slice(0, -2).some((a) => a.includes('shop')), 'no text in the script itself');
    assert.ok('problem' in desktopCommand('win32', 't', 'b'));
  });
});
