/** channels.json (reach/channels.ts): defaults, a hand-edited bad file naming the field, changes through the lock. */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  addWebhook,
  checkWebhook,
  LoopxError,
  ntfyTarget,
  readChannels,
  removeWebhook,
  updateChannels,
} from '../../../../src/core/index';
import { removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

function configWith(text: string): string {
  const dir = tempDir('loopx-channels-');
  fs.writeFileSync(path.join(dir, 'channels.json'), text);
  return dir;
}

function corruptOf(fn: () => unknown): LoopxError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof LoopxError, String(e));
    return e;
  }
  assert.fail('expected an error');
}

describe('channels.json', () => {
  it('no file: nothing configured, the defaults', () => {
    const c = readChannels(tempDir('loopx-channels-'));
    assert.equal(c.exists, false);
    assert.deepEqual(c.config, {
      v: 1,
      desktop: false,
      webhooks: [],
      link_base: 'http://localhost:8080',
      retry: { first_seconds: 30, max_attempts: 6 },
    });
  });

  it('a hand-edited bad file is an error naming the file and the field', () => {
    const cases: [string, string, RegExp][] = [
      [
        '{"v":1,"webhooks":[{"name":"a","kind":"generic","url":"ftp://x/y"}]}',
        'webhooks.0.url',
        /must be http or https/,
      ],
      [
        '{"v":1,"webhooks":[{"name":"bad name","kind":"generic","url":"http://x/"}]}',
        'webhooks.0.name',
        /not a valid id/,
      ],
      ['{"v":1,"webhooks":[{"name":"a","kind":"email","url":"http://x/"}]}', 'webhooks.0.kind', /./],
      ['{"v":1,"webhooks":[{"name":"a","kind":"ntfy","url":"http://x/"}]}', 'webhooks.0.url', /topic URL/],
      ['{"v":1,"retry":{"first_seconds":0}}', 'retry.first_seconds', /./],
      ['{"v":1,"desktop":"yes"}', 'desktop', /./],
      ['{"v":1,"colour":"red"}', 'colour', /./],
      [
        '{"v":1,"webhooks":[{"name":"a","kind":"generic","url":"http://x/"},{"name":"a","kind":"slack","url":"http://y/"}]}',
        'webhooks.1.name',
        /second webhook named a/,
      ],
      [
        '{"v":1,"webhooks":[{"name":"desktop","kind":"generic","url":"http://x/"}]}',
        'webhooks.0.name',
        /desktop/,
      ],
    ];
    for (const [text, field, why] of cases) {
      const dir = configWith(text);
      const e = corruptOf(() => readChannels(dir));
      assert.equal(e.kind, 'corrupt', text);
      assert.equal(e.details.field, field, `${text}: ${e.message}`);
      assert.ok(e.message.includes(path.join(dir, 'channels.json')), e.message);
      assert.ok(e.message.includes(`field ${field}`) || field === 'colour', e.message);
      assert.match(e.message, why);
    }
    const broken = corruptOf(() => readChannels(configWith('{"v":1,')));
    assert.equal(broken.kind, 'corrupt');
    assert.match(broken.message, /not valid JSON/);
  });

  it('a change to a bad file is refused and leaves it as it was', () => {
    const text = '{"v":1,"desktop":"yes"}';
    const dir = configWith(text);
    assert.throws(() => updateChannels(dir, (c) => ({ ...c, desktop: true })), /field desktop/);
    assert.equal(fs.readFileSync(path.join(dir, 'channels.json'), 'utf8'), text);
  });

  it('add, remove and settings are written whole, 0600', () => {
    const dir = tempDir('loopx-channels-');
    updateChannels(dir, (c) =>
      addWebhook(c, checkWebhook({ name: 'a', kind: 'slack', url: 'https://h.example/x' })),
    );
    updateChannels(dir, (c) => ({ ...c, desktop: true, link_base: 'http://127.0.0.1:9000' }));
    const file = path.join(dir, 'channels.json');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const c = readChannels(dir).config;
    assert.deepEqual(c.webhooks, [{ name: 'a', kind: 'slack', url: 'https://h.example/x' }]);
    assert.equal(c.desktop, true);
    assert.throws(
      () =>
        updateChannels(dir, (x) =>
          addWebhook(x, checkWebhook({ name: 'a', kind: 'generic', url: 'http://x/' })),
        ),
      (e: LoopxError) => e.reason === 'channel_exists',
    );
    assert.throws(
      () => removeWebhook(c, 'nope'),
      (e: LoopxError) => e.reason === 'channel_not_found',
    );
    updateChannels(dir, (x) => removeWebhook(x, 'a'));
    assert.deepEqual(readChannels(dir).config.webhooks, []);
  });

  it('a flag that is wrong is named: --url, --kind, --name', () => {
    for (const [w, flag] of [
      [{ name: 'a', kind: 'generic', url: 'file:///etc/passwd' }, '--url'],
      [{ name: 'a', kind: 'pager', url: 'http://x/' }, '--kind'],
      [{ name: 'a b', kind: 'generic', url: 'http://x/' }, '--name'],
    ] as const) {
      const e = corruptOf(() => checkWebhook(w));
      assert.equal(e.kind, 'usage');
      assert.equal(e.details.field, flag, e.message);
      assert.ok(e.message.startsWith(flag), e.message);
    }
  });

  it('an ntfy topic URL splits into the server root and the topic', () => {
    assert.deepEqual(ntfyTarget('https://ntfy.sh/my-topic'), { root: 'https://ntfy.sh/', topic: 'my-topic' });
    assert.deepEqual(ntfyTarget('http://127.0.0.1:81/ntfy/t_1'), {
      root: 'http://127.0.0.1:81/ntfy/',
      topic: 't_1',
    });
    assert.equal(ntfyTarget('http://127.0.0.1:81/'), undefined);
    assert.equal(ntfyTarget('http://127.0.0.1:81/t?x=1'), undefined);
  });
});
