/**
 * Passkeys as an agent with a shell would attack them, without a browser: forging a passkey's
 * signature in the log, a passkey key the agent publishes or names but the person never pinned,
 * registering a passkey without the person's passphrase (the built CLI, and a code made without
 * the person's key), and the decision endpoints called from another origin, as a form, without a
 * session or with a session from a login link only.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import {
  decisionStatement,
  newKeyPair,
  pinKey,
  publishKey,
  signerFor,
  Store,
  workspaceId,
} from '../../src/core/index';
import { nextHlc } from '../../src/core/model/hlc';
import { startStatusServer } from '../../src/server/status-server';
import type { StatusServer } from '../../src/server/status-server';
import { mintPasskeyCode } from '../../src/server/passkey-codes';
import type { Sandbox } from '../helpers/security';
import { fails, gatedSandbox, loopx, removeTempDirs } from '../helpers/security';
import { appendChained, writerLog } from '../helpers/log-kit';
import { softAssertion, softPasskey } from '../helpers/soft-passkey';
import { denied } from '../helpers/hook-answers';
import { loopbackRequest } from '../helpers/http';

/** The status, the error's reason and the headers of one request, Host `localhost:<port>` unless given. */
async function raw(
  port: number,
  target: string,
  o: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; reason?: string; headers: http.IncomingHttpHeaders }> {
  const r = await loopbackRequest(port, target, {
    ...o,
    headers: { Host: `localhost:${port}`, ...o.headers },
  });
  let reason: string | undefined;
  try {
    reason = (JSON.parse(r.text) as { error?: { reason?: string } }).error?.reason;
  } catch {
    reason = undefined;
  }
  return { status: r.status, reason, headers: r.headers };
}

describe('security: passkeys', () => {
  let sb: Sandbox;
  let srv: StatusServer;
  let origin: string;
  const json = (body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: origin, ...headers },
    body: JSON.stringify(body),
  });
  const gateStatus = async (id: string) =>
    (
      JSON.parse((await sb.run(['--json', 'gate', 'list', '--goal-id', 'g'])).stdout) as {
        id: string;
        status: string;
      }[]
    ).find((g) => g.id === id)!.status;
  const lists = async (command: string) =>
    (
      (await sb.json(['quota', 'should-run', '--goal-id', 'g', '--preview'])) as {
        interaction_contract: { cli_channel: { next_cli_actions: string[] } };
      }
    ).interaction_contract.cli_channel.next_cli_actions.some((a) => a.endsWith(`-- '${command}'`));

  before(async () => {
    sb = await gatedSandbox();
    srv = await startStatusServer({
      workspace: sb.dir,
      store: Store.open(sb.dir, { configDir: sb.config }),
      port: 0,
    });
    origin = `http://localhost:${srv.port}`;
  });
  after(async () => {
    await srv?.close();
    removeTempDirs();
  });

  /** Appends a gate.approved of prod in a passkey's name, its `sig` made by `make`, as a forger would. */
  function forgeApproval(make: (statement: string, ws: string) => Record<string, unknown>, id: string) {
    const last = JSON.parse(fs.readFileSync(writerLog(sb.dir, 'g'), 'utf8').trim().split('\n').at(-1)!) as {
      writer: string;
      hlc: string;
    };
    const ws = JSON.parse(fs.readFileSync(sb.file('.loopx', 'workspace.json'), 'utf8')).id as string;
    const facts = {
      id,
      ts: new Date().toISOString(),
      writer: last.writer,
      actor: { kind: 'user' as const, id: 'ada-passkey', channel: 'browser' as const },
      type: 'gate.approved',
      data: { gateId: 'prod' },
    };
    // The clock stamp is signed too: the one appendChained gives the line.
    const hlc = nextHlc(last.hlc, new Date(0));
    const statement = decisionStatement({ goalId: 'g', ...facts, hlc }, ws);
    appendChained(writerLog(sb.dir, 'g'), { ...facts, hlc, sig: make(statement, ws) });
  }

  it('a passkey key the agent made, published or not, signs nothing that counts', async () => {
    const p = softPasskey('ada-passkey');
    fs.mkdirSync(sb.file('.loopx', 'approvers'), { recursive: true });
    fs.writeFileSync(sb.file('.loopx', 'approvers', `${p.key.keyId}.json`), JSON.stringify(p.key));
    forgeApproval((statement, ws) => softAssertion(p, statement, ws), 'ev-forgedpk01');
    assert.equal(await gateStatus('prod'), 'pending');
    assert.equal(await lists('echo deployed'), false);
    assert.match(
      (await sb.run(['verify', '--goal-id', 'g'])).stdout,
      /ev-forgedpk01 .* is ignored: .*not pinned on this machine/,
    );
  });

  it('a pinned passkey’s id with an assertion by another key, or without UV, counts nowhere', async () => {
    const person = softPasskey('ada-passkey');
    pinKey(sb.config, person.key);
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    forgeApproval((s, ws) => softAssertion(person, s, ws, { signWith: other }), 'ev-forgedpk02');
    // An agent that somehow got an assertion without the person's verification (UV clear).
    forgeApproval((s, ws) => softAssertion(person, s, ws, { flags: 0x01 }), 'ev-forgedpk03');
    // The person's key pair as a plain Ed25519 signature carrying a made-up assertion.
    const { privateKey, pub } = newKeyPair('alice2', new Date().toISOString());
    pinKey(sb.config, pub);
    forgeApproval(
      (s, ws) => ({
        ...softAssertion(person, s, ws),
        keyId: pub.keyId,
        sig: signerFor(privateKey, pub.keyId, 'x').sign(s),
      }),
      'ev-forgedpk04',
    );
    const verify = (await sb.run(['verify', '--goal-id', 'g'])).stdout;
    assert.match(verify, /ev-forgedpk02 .* is ignored: .*does not verify/);
    assert.match(verify, /ev-forgedpk03 .* is ignored: .*UV flag clear/);
    assert.match(verify, /ev-forgedpk04 .* is ignored: .*is an Ed25519 key, and this signature is a passkey/);
    assert.equal(await gateStatus('prod'), 'pending');
    assert.equal(await lists('echo deployed'), false);
  });

  it('registering a passkey takes the person’s passphrase; a code not signed by their key is refused', async () => {
    fails(await sb.run(['key', 'passkey', 'add', '--port', String(srv.port)]), 4, /no terminal here/);
    const wrong = await loopx(['--passphrase-fd', '3', 'key', 'passkey', 'add', '--port', String(srv.port)], {
      cwd: sb.dir,
      env: { LOOPX_CONFIG_DIR: sb.config },
      fd3: 'a guess at it\n',
    });
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /wrong passphrase/);
    assert.doesNotMatch(wrong.stdout, /passkey\/register/);
    // A code an agent signs with a key of its own, published in the workspace but pinned by nobody.
    // (A key pinned in the config folder already decides here: pinning is the person's act.)
    const { privateKey, pub } = newKeyPair('agent', new Date().toISOString());
    publishKey(path.join(sb.dir, '.loopx'), pub);
    const { code } = mintPasskeyCode(signerFor(privateKey, pub.keyId, 'agent'), 'agent-passkey');
    const r = await raw(srv.port, '/passkey/register/options', json({ code }));
    assert.equal(r.status, 401);
    assert.equal(r.reason, 'passkey_code_invalid');
    // The status token is no way in either: a dashboard login code is not a registration code.
    const login = new URL(srv.loginUrl()).searchParams.get('code');
    assert.equal(
      (await raw(srv.port, '/passkey/register/options', json({ code: login }))).reason,
      'passkey_code_invalid',
    );
    // Through the agent hooks it is a person's decision, whatever the mode.
    const hook = await loopx(['hook', 'pre-tool-use'], {
      cwd: sb.dir,
      env: { LOOPX_CONFIG_DIR: sb.config, CLAUDE_CODE_SESSION_ID: 's-1' },
      input: JSON.stringify({
        session_id: 's-1',
        cwd: sb.dir,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: `loopx key passkey add --port ${srv.port}` },
      }),
    });
    denied(hook, /is a person's decision/);
  });

  it('the decision endpoints take only a JSON POST from the page’s own origin', async () => {
    const body = { workspace: workspaceId(sb.dir), goal: 'g', gate: 'prod', decision: 'approve', shown: 'x' };
    for (const [what, headers, status] of [
      ['another site', { Origin: 'http://evil.example' }, 403],
      ['another localhost port', { Origin: 'http://localhost:1' }, 403],
      ['no Origin', { Origin: '' }, 403],
      ['a form (text/plain)', { 'Content-Type': 'text/plain' }, 415],
      ['a form (urlencoded)', { 'Content-Type': 'application/x-www-form-urlencoded' }, 415],
    ] as const) {
      const o = json(body, headers as Record<string, string>);
      if (o.headers.Origin === '') delete (o.headers as Partial<typeof o.headers>).Origin;
      for (const target of [
        '/decide/options',
        '/decide/commit',
        '/passkey/login/options',
        '/passkey/register/verify',
      ])
        assert.equal((await raw(srv.port, target, o)).status, status, `${what} ${target}`);
    }
    assert.equal((await raw(srv.port, '/decide/options', json(body))).status, 401, 'no session');
    const big = await raw(srv.port, '/decide/options', {
      ...json(body),
      body: JSON.stringify({ ...body, pad: 'x'.repeat(70_000) }),
    });
    assert.equal(big.status, 413);
    assert.equal(
      (await raw(srv.port, '/decide/options', { method: 'GET' })).status,
      405,
      'GET on a POST endpoint',
    );
    assert.equal((await raw(srv.port, '/status', json({}))).status, 405, 'POST elsewhere');
    for (const host of [`evil.example:${srv.port}`, `localhost.evil.example:${srv.port}`])
      assert.equal((await raw(srv.port, '/decide/options', json(body, { Host: host }))).status, 421, host);
    // At an address a passkey cannot be used (no RP ID): the page says to open localhost instead.
    const atIp = await raw(
      srv.port,
      '/passkey/login/options',
      json({}, { Host: `127.0.0.1:${srv.port}`, Origin: `http://127.0.0.1:${srv.port}` }),
    );
    assert.equal(atIp.reason, 'passkey_needs_host_name');
    assert.equal(await gateStatus('prod'), 'pending');
  });

  it('a session from a login link may read the decision page but not ask to sign', async () => {
    const login = await raw(srv.port, new URL(srv.loginUrl()).pathname + new URL(srv.loginUrl()).search, {});
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const read = await raw(srv.port, '/decide', { headers: { Accept: 'application/json', Cookie: cookie } });
    assert.equal(read.status, 200);
    const body = { workspace: workspaceId(sb.dir), goal: 'g', gate: 'prod', decision: 'approve', shown: 'x' };
    assert.equal(
      (await raw(srv.port, '/decide/options', json(body, { Cookie: cookie }))).reason,
      'passkey_sign_in',
    );
    assert.equal(
      (await raw(srv.port, '/decide', { headers: { Accept: 'application/json' } })).status,
      401,
      'no session: no data',
    );
    // A workspace is named by its id in the config folder's list, never by a path.
    const named = await raw(srv.port, `/decide/${encodeURIComponent('/etc')}/g/prod`, {
      headers: { Accept: 'application/json', Cookie: cookie },
    });
    assert.equal(named.status, 400);
    assert.equal(named.reason, 'no_such_workspace');
  });
});
