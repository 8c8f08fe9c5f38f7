/**
 * Deciding from a browser with a passkey, end to end: the real status server (`startStatusServer`)
 * on a workspace the built CLI made (goal g: todo `deploy` runs `echo deployed` behind gate prod,
 * todo `migrate` runs `echo migrated` behind gate prod2), Debian's Chromium through playwright-core
 * with Chromium's virtual authenticator (CDP `WebAuthn.*`) standing in for the person's device.
 *
 * The person registers a passkey through the one-time link `loopx key passkey add` prints, opens
 * `/decide/<workspace>/g/prod` and approves; the agent's next contract then lists the command, and
 * other processes replay the decision as effective. Then the attacks: the approval's POST sent
 * again, the stored event copied with a new id or other data, an assertion without user
 * verification, scripts without the authenticator, the registration link used twice or not at all.
 *
 *   node --import tsx --test test/browser/passkey.test.ts
 *
 * Screenshot: test-results/screenshots/decide.png (docs/screenshots/decide.png with
 * LOOPX_UPDATE_SCREENSHOTS=1).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { workspaceId } from '../../src/core/index';
import type { LoopxEvent } from '../../src/core/index';
import type { StatusServer } from '../../src/server/status-server';
import { loopx, ok, PASSPHRASE, REPO, removeTempDirs, tempDir } from '../helpers/cli';
import { appendChained, writerLog } from '../helpers/log-kit';
import type { PasskeyBrowser } from '../helpers/passkey-browser';
import {
  buildForBrowser,
  openPasskeyBrowser,
  passkeyLink,
  registerPasskey,
  resendCommit,
  SHOTS,
} from '../helpers/passkey-browser';

describe('deciding from a browser with a passkey', () => {
  const ws = fs.realpathSync(tempDir('loopx-passkey-ws-'));
  const config = tempDir('loopx-passkey-config-');
  const env = { LOOPX_CONFIG_DIR: config };
  let h: PasskeyBrowser;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let srv: StatusServer;
  let origin: string;
  const run = (args: string[], extra: Record<string, string> = {}) =>
    loopx(args, { cwd: ws, env: { ...env, ...extra } });
  const json = async (args: string[], extra: Record<string, string> = {}) =>
    JSON.parse(ok(await run(['--json', ...args], extra)).stdout);
  const gateStatus = async (id: string) =>
    ((await json(['gate', 'list', '--goal-id', 'g'])) as { id: string; status: string }[]).find(
      (g) => g.id === id,
    )!.status;
  /** Whether the agent's contract would list `command` now (a preview: it opens no run). */
  const lists = async (command: string) =>
    (
      (await json(['quota', 'should-run', '--goal-id', 'g', '--preview'], { LOOPX_AGENT: 'codex' })) as {
        interaction_contract: { cli_channel: { next_cli_actions: string[] } };
      }
    ).interaction_contract.cli_channel.next_cli_actions.some((a) => a.endsWith(`-- '${command}'`));
  const logLines = () => fs.readFileSync(writerLog(ws, 'g'), 'utf8').split('\n').filter(Boolean);
  const gateUrl = (gate: string) => `${origin}/decide/${workspaceId(ws)}/g/${gate}`;

  /** A POST as a script with the loopback port would send it (Node's fetch: no authenticator). */
  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${origin}${p}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: origin, ...headers },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { reason: string } } }));

  before(async () => {
    buildForBrowser();
    ok(await run(['init']));
    await json(['goal', 'create', '--goal-id', 'g', '--title', 'Ship the release', '--turns', '3']);
    await json([
      'todo',
      'add',
      '--goal-id',
      'g',
      '--todo-id',
      'deploy',
      '--title',
      'Deploy',
      '--action',
      'echo deployed',
      '--gate',
      'prod',
    ]);
    await json([
      'todo',
      'add',
      '--goal-id',
      'g',
      '--todo-id',
      'migrate',
      '--title',
      'Migrate',
      '--action',
      'echo migrated',
      '--gate',
      'prod2',
    ]);
    ok(
      await loopx(['key', 'create', '--name', 'alice', '--passphrase-fd', '3'], {
        cwd: ws,
        env,
        fd3: `${PASSPHRASE}\n`,
      }),
    );
    h = await openPasskeyBrowser(ws, config);
    ({ srv, origin, context, page, cdp, authenticatorId } = h);
  });

  after(async () => {
    await h?.close();
    removeTempDirs();
  });

  let link = '';

  it('registers a passkey through the one-time link, which takes the person’s passphrase', async () => {
    const agent = await run(['key', 'passkey', 'add', '--port', String(srv.port)]);
    assert.notEqual(agent.code, 0, 'an agent without the passphrase gets no link');
    assert.doesNotMatch(agent.stdout, /passkey\/register/);
    link = await passkeyLink(ws, config, srv.port, 'ada-laptop');
    assert.match(link, new RegExp(`^http://localhost:${srv.port}/passkey/register\\?code=`));
    await registerPasskey(page, link, 'ada-laptop');
    assert.equal(new URL(page.url()).search, '', 'the spent code left the address bar');
    const pinned = fs
      .readdirSync(path.join(config, 'trusted'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(config, 'trusted', f), 'utf8')));
    const pk = pinned.find((k) => k.passkey);
    assert.ok(pk, 'a passkey is pinned');
    assert.equal(pk.passkey.rpId, 'localhost');
    assert.equal(pk.name, 'ada-laptop');
    assert.ok(
      fs.existsSync(path.join(ws, '.loopx', 'approvers', `${pk.keyId}.json`)),
      'published for teammates',
    );
  });

  it('the registration link works once; a registration without a link is refused', async () => {
    const again = await context.newPage();
    await again.goto(link);
    await again.getByRole('button', { name: 'Create the passkey' }).click();
    await again.getByText(/already used/).waitFor({ timeout: 10_000 });
    await again.goto(`${origin}/passkey/register`);
    await again.getByRole('button', { name: 'Create the passkey' }).click();
    await again.getByText(/not valid here/).waitFor({ timeout: 10_000 });
    await again.close();
    const code = new URL(link).searchParams.get('code');
    assert.equal((await post('/passkey/register/options', { code })).body.error?.reason, 'passkey_code_used');
    assert.equal((await post('/passkey/register/options', {})).body.error?.reason, 'passkey_code_invalid');
    const pinned = fs
      .readdirSync(path.join(config, 'trusted'))
      .filter((f) => fs.readFileSync(path.join(config, 'trusted', f), 'utf8').includes('"passkey"'));
    assert.equal(pinned.length, 1, 'still one passkey');
  });

  it('a script without the authenticator is refused, with a session or without', async () => {
    const before = logLines().length;
    const madeUp = {
      id: 'made-up-challenge-id',
      response: {
        id: 'AAAA',
        rawId: 'AAAA',
        type: 'public-key',
        response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' },
        clientExtensionResults: {},
      },
    };
    const decide = { workspace: workspaceId(ws), goal: 'g', gate: 'prod', decision: 'approve', shown: 'x' };
    assert.equal((await post('/decide/commit', madeUp)).status, 401, 'no session');
    assert.equal((await post('/decide/options', decide)).status, 401, 'no session');
    // A session from a login link (made from the token, which any process of the user can read).
    const login = await fetch(srv.loginUrl(), { redirect: 'manual' });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    assert.match(cookie, /^loopx_session_/);
    const withSession = { Cookie: cookie };
    assert.equal((await post('/decide/options', decide, withSession)).body.error?.reason, 'passkey_sign_in');
    assert.equal((await post('/decide/commit', madeUp, withSession)).body.error?.reason, 'passkey_sign_in');
    assert.equal(
      (await post('/passkey/login/verify', madeUp, withSession)).body.error?.reason,
      'passkey_challenge_spent',
    );
    // A real sign-in challenge answered with a made-up assertion.
    const opts = await post('/passkey/login/options', {}, withSession);
    const answered = await post(
      '/passkey/login/verify',
      { ...madeUp, id: (opts.body as unknown as { id: string }).id },
      withSession,
    );
    assert.equal(answered.status, 403);
    assert.equal(answered.body.error?.reason, 'passkey_not_pinned');
    // Another site's page (another localhost port) and a form post are refused before any route.
    const foreign = await post('/decide/commit', madeUp, { ...withSession, Origin: 'http://localhost:1' });
    assert.equal(foreign.status, 403);
    const form = await fetch(`${origin}/decide/commit`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', Origin: origin, Cookie: cookie },
      body: '{}',
    });
    assert.equal(form.status, 415);
    assert.equal(logLines().length, before, 'nothing was written');
    assert.equal(await gateStatus('prod'), 'pending');
    assert.equal(await lists('echo deployed'), false);
  });

  it('an assertion without user verification decides nothing', async () => {
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    try {
      const before = logLines().length;
      await page.goto(gateUrl('prod'));
      await page.getByRole('button', { name: 'Approve' }).click();
      // The browser itself refuses: the server asked for user verification.
      await page.getByText(/The passkey was not used/).waitFor({ timeout: 15_000 });
      // A page talked into asking for none (its options rewritten on the way) gets an assertion
      // with the UV flag clear: the server refuses it.
      await page.route('**/decide/options', async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as { options: { userVerification: string } };
        body.options.userVerification = 'discouraged';
        await route.fulfill({ response: res, json: body });
      });
      const commit = page.waitForResponse((r) => r.url().endsWith('/decide/commit'));
      await page.getByRole('button', { name: 'Approve' }).click();
      const answer = await commit;
      assert.equal(answer.status(), 403);
      assert.equal(
        ((await answer.json()) as { error: { reason: string } }).error.reason,
        'passkey_not_verified',
      );
      await page.getByText(/passkey’s answer was refused/).waitFor({ timeout: 15_000 });
      assert.equal(logLines().length, before, 'nothing was written');
      assert.equal(await gateStatus('prod'), 'pending');
      assert.equal(await lists('echo deployed'), false);
    } finally {
      await page.unroute('**/decide/options');
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    }
  });

  let commitBody = '';

  it('approving on the decision page signs exactly the event written; the next contract lists the command', async () => {
    await page.goto(gateUrl('prod'));
    await page.getByText('$ echo deployed').first().waitFor({ timeout: 15_000 });
    await page
      .getByText(/Requested by/)
      .first()
      .waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'decide.png') });
    if (process.env.LOOPX_UPDATE_SCREENSHOTS === '1')
      fs.copyFileSync(path.join(SHOTS, 'decide.png'), path.join(REPO, 'docs', 'screenshots', 'decide.png'));
    page.on('request', (r) => {
      if (r.url().endsWith('/decide/commit')) commitBody = r.postData() ?? '';
    });
    await page.locator('#note').fill('ship it');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page
      .getByText(/Approved: gate prod is approved, signed with your passkey ada-laptop/)
      .waitFor({ timeout: 15_000 });
    // Other processes (the built CLI) replay the logs: the decision counts there.
    assert.equal(await gateStatus('prod'), 'approved');
    const contract = await json(['quota', 'should-run', '--goal-id', 'g'], { LOOPX_AGENT: 'codex' });
    const actions = contract.interaction_contract.cli_channel.next_cli_actions as string[];
    assert.ok(
      actions.some((a) => a.endsWith(`-- 'echo deployed'`)),
      JSON.stringify(actions),
    );
    assert.ok(!actions.some((a) => a.includes('echo migrated')), JSON.stringify(actions));
    const ev = logLines()
      .map((l) => JSON.parse(l) as LoopxEvent)
      .find((e) => e.type === 'gate.approved')!;
    assert.deepEqual(ev.actor, { kind: 'user', id: 'ada-laptop', channel: 'browser' });
    assert.ok(ev.sig?.webauthn, 'signed by the passkey');
    const verify = ok(await run(['verify', '--goal-id', 'g'])).stdout;
    assert.doesNotMatch(verify, /ignored/);
  });

  it('the approval’s POST sent again finds its challenge spent', async () => {
    assert.ok(commitBody, 'the page posted its commit');
    const before = logLines().length;
    const again = await resendCommit(page, '../../../decide/commit', commitBody);
    assert.equal(again.status, 410);
    assert.equal(again.body.error?.reason, 'decision_challenge_spent');
    assert.equal(logLines().length, before);
  });

  it('the stored event copied with a new id, or with other data, is ignored on replay', async () => {
    const signed = logLines()
      .map((l) => JSON.parse(l) as LoopxEvent)
      .find((e) => e.type === 'gate.approved')!;
    const { v: _v, hlc: _h, seq: _s, prev: _p, writer: _w, ...copy } = signed;
    appendChained(writerLog(ws, 'g'), { ...copy, id: 'ev-copiedid01' });
    appendChained(writerLog(ws, 'g'), {
      ...copy,
      id: 'ev-copiedid02',
      data: { ...(signed.data as object), gateId: 'prod2' },
    });
    const verify = ok(await run(['verify', '--goal-id', 'g'])).stdout;
    assert.match(verify, /ev-copiedid01 .* is ignored: .*another statement/);
    assert.match(verify, /ev-copiedid02 .* is ignored: .*another statement/);
    assert.equal(await gateStatus('prod2'), 'pending');
    assert.equal(await lists('echo migrated'), false);
    assert.equal(await lists('echo deployed'), true, 'the person’s approval still counts');
    // The list page still offers gate prod2 for a decision.
    await page.goto(`${origin}/decide`);
    await page.getByText(/Gate prod2/).waitFor({ timeout: 15_000 });
  });

  it('grants budget from the page, signed with the passkey; a stale page is told to look again', async () => {
    const limit = async () =>
      ((await json(['quota', 'show', '--goal-id', 'g'])) as { budgets: { turns: { limit: number } } }).budgets
        .turns.limit;
    const before = await limit();
    await page.goto(`${origin}/grant/${workspaceId(ws)}/g`);
    await page.getByText(/turns: \d+ used of 3/).waitFor({ timeout: 15_000 });
    // The budgets change after the page showed them: the grant asked for is refused.
    await json(['quota', 'set', '--goal-id', 'g', '--turns', '2']);
    await page.locator('#grant-turns').fill('5');
    await page.getByRole('button', { name: 'Grant' }).click();
    await page.getByText(/The goal changed while you decided; look again/).waitFor({ timeout: 15_000 });
    assert.equal(await limit(), 2);
    await page.reload();
    await page.getByText(/turns: \d+ used of 2/).waitFor({ timeout: 15_000 });
    // An agent writes to the goal while the passkey signs: the signed event is not written.
    await page.route('**/decide/commit', async (route) => {
      await json(['todo', 'add', '--goal-id', 'g', '--title', 'Meanwhile'], { LOOPX_AGENT: 'codex' });
      await route.continue();
    });
    await page.locator('#grant-turns').fill('5');
    await page.getByRole('button', { name: 'Grant' }).click();
    await page.getByText(/The goal changed while you decided; look again/).waitFor({ timeout: 15_000 });
    await page.unroute('**/decide/commit');
    assert.equal(await limit(), 2);
    await page.reload();
    await page.getByText(/turns: \d+ used of 2/).waitFor({ timeout: 15_000 });
    await page.locator('#grant-turns').fill('5');
    await page.getByRole('button', { name: 'Grant' }).click();
    await page.getByText(/Granted, signed with your passkey ada-laptop/).waitFor({ timeout: 15_000 });
    assert.ok((await limit()) > 2, `the grant counts for another process (was ${before})`);
    const ev = logLines()
      .map((l) => JSON.parse(l) as LoopxEvent)
      .find((e) => e.type === 'quota.granted')!;
    assert.deepEqual(ev.actor, { kind: 'user', id: 'ada-laptop', channel: 'browser' });
    assert.ok(ev.sig?.webauthn);
  });
});
