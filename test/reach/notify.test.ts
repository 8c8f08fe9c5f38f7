/**
 * `loopx notify` end to end: real `loopx` processes, a temp config folder and two workspaces with
 * pending gates, and a receiver on 127.0.0.1 (one path a format). Each gate reaches each channel
 * exactly once with its facts and no secret, across a SIGKILL of the sender; a failing channel is
 * retried and shown failing by `loopx doctor`; the desktop channel runs the `notify-send` first on
 * PATH; and with no channels.json nothing is sent at all.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceId } from '../../src/core/store/config-dir';
import { BIN, cleanEnv, loopx, ok, removeTempDirs, tempDir, type Result } from '../helpers/cli';
import { changed, receiver, waitFor, type Got } from '../helpers/receiver';

const config = tempDir('loopx-notify-config-');
const home = tempDir('loopx-notify-home-');
const env = { LOOPX_CONFIG_DIR: config, HOME: home };
const run = (cwd: string, ...args: string[]) => loopx(args, { cwd, env });
const asAgent = (cwd: string, ...args: string[]) =>
  loopx(args, { cwd, env: { ...env, LOOPX_AGENT: 'codex' } });

/** A command with Slack's mention and link syntax and backticks: it must arrive whole, and inert. */
const COMMAND =
  "printf '%s\\n' '<!channel>' '<https://evil.example|click>' `date` && sh deploy.sh --env prod";

/** A workspace `name` with the goal `g` and, asked by agent codex, the gate `gate` over a command todo. */
async function workspace(name: string, gate: string): Promise<string> {
  const dir = path.join(tempDir('loopx-notify-ws-'), name);
  fs.mkdirSync(dir);
  ok(await run(dir, 'init'));
  ok(await run(dir, 'goal', 'create', '--goal-id', 'g', '--title', `Goal of ${name}`));
  await requestGate(dir, gate);
  return dir;
}

async function requestGate(dir: string, gate: string): Promise<void> {
  ok(
    await asAgent(
      dir,
      'todo',
      'add',
      '--goal-id',
      'g',
      '--todo-id',
      `t-${gate}`,
      '--title',
      'Deploy',
      '--action',
      COMMAND,
    ),
  );
  ok(
    await asAgent(
      dir,
      'gate',
      'request',
      '--goal-id',
      'g',
      '--gate-id',
      gate,
      '--reason',
      `ship ${gate}`,
      '--guards',
      `t-${gate}`,
    ),
  );
}

/** `loopx notify watch` as a process of its own, its stderr kept. */
function watcher(extraEnv: Record<string, string> = {}): {
  child: ChildProcess;
  log(): string;
  sent(): string[];
} {
  const child = spawn(process.execPath, [BIN, 'notify', 'watch'], {
    cwd: home,
    env: cleanEnv({ ...env, ...extraEnv }),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c;
    changed.emit('change');
  });
  return {
    child,
    log: () => err,
    sent: () => err.split('\n').filter((l) => l.startsWith('loopx notify: sent ')),
  };
}

const exited = (c: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    c.exitCode !== null || c.signalCode !== null
      ? resolve(c.exitCode)
      : c.on('exit', (code) => resolve(code)),
  );

function killGroup(c: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL') {
  try {
    if (c?.pid) process.kill(-c.pid, signal);
  } catch {
    // gone already
  }
}

/** The gate a request was about, whatever its format. */
function gateOf(g: Got): string {
  if (g.json.schema === 'loopx.notice/1') return g.json.id as string;
  const text = g.body;
  const m = /gate ([a-z0-9-]+) needs your decision/.exec(text);
  return m ? m[1]! : '?';
}

const formatOf = (g: Got) =>
  g.path === '/generic' ? 'generic' : g.path === '/slack' ? 'slack' : g.path === '/ntfy/' ? 'ntfy' : g.path;

/** How many requests each format got for each gate: `generic prod` -> n. */
function tally(got: Got[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const g of got) {
    const k = `${formatOf(g)} ${gateOf(g)}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

describe('loopx notify: word that reaches the person', { concurrency: false }, () => {
  let rx: Awaited<ReturnType<typeof receiver>>;
  let a: string;
  let b: string;
  let secrets: string[] = [];
  let w: ReturnType<typeof watcher> | undefined;

  before(async () => {
    rx = await receiver();
    [a, b] = await Promise.all([workspace('alpha', 'prod'), workspace('beta', 'release')]);
    // The status server's token and a login code: neither may ever leave in a notice.
    const token = JSON.parse(ok(await run(a, '--json', 'status-server', '--print-token')).stdout) as {
      token: string;
      file: string;
    };
    secrets = [fs.readFileSync(token.file, 'utf8').trim(), token.token];
    const server = spawn(process.execPath, [BIN, '--json', 'status-server', '--port', '0'], {
      cwd: a,
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    });
    let out = '';
    server.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      changed.emit('change');
    });
    await waitFor('the status server’s address', () => /"login_url"/.test(out) && out.trim().endsWith('}'));
    killGroup(server);
    const login = (JSON.parse(out) as { login_url: string }).login_url;
    secrets.push(new URL(login).searchParams.get('code')!);
    assert.ok(secrets.every((s) => s.length >= 16));
  });

  after(() => {
    killGroup(w?.child);
    rx?.close();
    removeTempDirs();
  });

  it('with no channels.json nothing is sent, while a gate is pending and a pass runs', async () => {
    const r = ok(await run(a, 'notify', 'send'));
    assert.match(r.stdout, /no channels set up: nothing sent/);
    assert.deepEqual(rx.got, []);
    assert.ok(!fs.existsSync(path.join(config, 'channels.json')));
    assert.ok(!fs.existsSync(path.join(config, 'notify')), 'not even the outbox is made');
  });

  it('each gate reaches each format exactly once, with its facts and no secret', async () => {
    ok(
      await run(home, 'notify', 'add', '--name', 'json', '--kind', 'generic', '--url', `${rx.base}/generic`),
    );
    ok(await run(home, 'notify', 'add', '--name', 'team', '--kind', 'slack', '--url', `${rx.base}/slack`));
    ok(
      await run(
        home,
        'notify',
        'add',
        '--name',
        'phone',
        '--kind',
        'ntfy',
        '--url',
        `${rx.base}/ntfy/loopx-topic`,
      ),
    );
    w = watcher();
    const sender = w;
    await waitFor(
      'six deliveries',
      () => sender.sent().length >= 6,
      30_000,
      () => sender.log(),
    );
    assert.deepEqual(tally(rx.got), {
      'generic prod': 1,
      'generic release': 1,
      'slack prod': 1,
      'slack release': 1,
      'ntfy prod': 1,
      'ntfy release': 1,
    });
    for (const g of rx.got)
      for (const s of secrets) assert.ok(!g.body.includes(s), `a secret in ${g.path}: ${g.body}`);

    const generic = rx.got.filter((g) => g.path === '/generic').map((g) => g.json);
    const prod = generic.find((g) => g.id === 'prod')!;
    assert.deepEqual(prod.commands, [COMMAND]);
    assert.equal(prod.requested_by, 'agent codex at the command line (unsigned)');
    assert.deepEqual(prod.workspace, { name: 'alpha', path: a });
    assert.deepEqual(prod.goal, { id: 'g', title: 'Goal of alpha' });
    assert.equal(prod.detail, 'ship prod');
    assert.equal(prod.link, `http://localhost:8080/decide/${workspaceId(a)}/g/prod`);
    const release = generic.find((g) => g.id === 'release')!;
    assert.equal(release.link, `http://localhost:8080/decide/${workspaceId(b)}/g/release`);

    const slack = rx.got.find((g) => g.path === '/slack' && gateOf(g) === 'prod')!;
    assert.ok(!slack.body.includes('<!channel>') && !slack.body.includes('<https://evil'), slack.body);
    assert.ok(slack.body.includes('&lt;!channel&gt;'));
    assert.ok(slack.body.includes(`<http://localhost:8080/decide/${workspaceId(a)}/g/prod|Decide in LoopX>`));
    assert.ok(slack.body.includes('agent codex at the command line (unsigned)'));

    const ntfy = rx.got.find((g) => g.path === '/ntfy/' && gateOf(g) === 'prod')!;
    assert.equal(ntfy.json.topic, 'loopx-topic');
    assert.equal(ntfy.json.click, `http://localhost:8080/decide/${workspaceId(a)}/g/prod`);
    assert.ok((ntfy.json.message as string).includes(`$ ${COMMAND}`));
    assert.ok((ntfy.json.message as string).includes(`Workspace: alpha (${a})`));
  });

  it('a sender killed with SIGKILL and started again sends a new gate once, and nothing again', async () => {
    killGroup(w!.child);
    await exited(w!.child);
    w = watcher();
    const sender = w;
    await requestGate(a, 'hotfix');
    await waitFor(
      'the new gate in three formats',
      () => sender.sent().length >= 3,
      30_000,
      () => sender.log(),
    );
    // What a pass after all of it finds to send: nothing.
    const again = ok(await run(home, '--json', 'notify', 'send'));
    const doc = JSON.parse(again.stdout) as { sent: unknown[]; busy: boolean };
    assert.deepEqual(doc.sent, []);
    assert.equal(rx.got.length, 9, JSON.stringify(tally(rx.got)));
    assert.deepEqual(
      Object.entries(tally(rx.got)).filter(([, n]) => n !== 1),
      [],
      'every gate once per format',
    );
    assert.deepEqual(sender.sent().length, 3, sender.log());
  });

  it('a failing channel is tried again and `loopx doctor` names it with its error and when', async () => {
    const file = path.join(config, 'channels.json');
    const c = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      webhooks: unknown[];
      retry: Record<string, number>;
    };
    c.webhooks.push({ name: 'flaky', kind: 'generic', url: `${rx.base}/bad` });
    c.retry = { first_seconds: 1, max_attempts: 3 };
    fs.writeFileSync(file, JSON.stringify(c, null, 2));
    const bad = () => rx.got.filter((g) => g.path === '/bad');
    const attemptsOf = (gate: string) => bad().filter((g) => g.json.id === gate).length;
    await waitFor(
      'a second attempt at the failing channel',
      () => attemptsOf('prod') >= 2,
      30_000,
      () => w!.log(),
    );
    assert.match(w!.log(), /could not send gate prod in alpha to flaky \(attempt 1\): answered 500/);

    const doctor = await run(a, '--json', 'doctor');
    const check = (
      JSON.parse(doctor.stdout) as { checks: { id: string; status: string; message: string; fix?: string }[] }
    ).checks.find((x) => x.id === 'notify')!;
    assert.equal(check.status, 'warn');
    assert.match(
      check.message,
      /channel flaky is failing: answered 500 Internal Server Error \(at \d{4}-\d\d-\d\dT[\d:.]+Z\)/,
    );
    assert.equal(check.fix, 'loopx notify test --name flaky');
    const list = JSON.parse(ok(await run(home, '--json', 'notify', 'list')).stdout) as {
      channels: { name: string; status: string; last_error?: string }[];
    };
    assert.deepEqual(
      list.channels.map((x) => [x.name, x.status]),
      [
        ['json', 'ok'],
        ['team', 'ok'],
        ['phone', 'ok'],
        ['flaky', 'failing'],
      ],
    );
    // The working channels sent nothing more for the change of the file.
    assert.equal(rx.got.filter((g) => g.path !== '/bad').length, 9);
    killGroup(w!.child, 'SIGTERM');
    assert.equal(await exited(w!.child), 0, 'SIGTERM ends the sender cleanly');
  });

  it('desktop on: one notification per gate through the notify-send first on PATH', async () => {
    const bin = tempDir('loopx-notify-bin-');
    const record = path.join(bin, 'calls.jsonl');
    fs.writeFileSync(
      path.join(bin, 'notify-send'),
      `#!${process.execPath}\nrequire('fs').appendFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`,
      { mode: 0o755 },
    );
    ok(await run(home, 'notify', 'desktop', 'on'));
    w = watcher({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` });
    const sender = w;
    const desktop = () => sender.sent().filter((l) => l.endsWith(' to desktop'));
    await waitFor(
      'three desktop notifications',
      () => desktop().length >= 3,
      30_000,
      () => sender.log(),
    );
    const calls = fs
      .readFileSync(record, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string[]);
    assert.equal(calls.length, 3);
    const titles = calls.map((args) => args[args.indexOf('--') + 1]).sort();
    assert.deepEqual(titles, [
      'LoopX: gate hotfix needs your decision',
      'LoopX: gate prod needs your decision',
      'LoopX: gate release needs your decision',
    ]);
    const prod = calls.find((args) => args.includes('LoopX: gate prod needs your decision'))!;
    const body = prod[prod.length - 1]!;
    assert.ok(body.includes('Asked by: agent codex at the command line (unsigned)'), body);
    assert.ok(body.includes('&lt;!channel&gt;'), body);
    assert.ok(body.includes(`/decide/${workspaceId(a)}/g/prod`), body);
    for (const s of secrets) assert.ok(!calls.flat().some((x) => x.includes(s)));
    killGroup(w.child, 'SIGTERM');
    assert.equal(await exited(w.child), 0);
  });

  it('`loopx drive` tells the person too: a gate asked while no other sender runs is sent by the driver', async () => {
    await requestGate(b, 'late');
    const before = rx.got.length;
    // No lanes: `--until-idle` returns at once, and the driver's sender finishes its pass first.
    const r = ok(await run(b, 'drive', '--until-idle'));
    assert.match(r.stderr, /loopx notify: sent gate late in beta to json/);
    const late = rx.got.slice(before).filter((g) => g.path !== '/bad');
    assert.deepEqual(late.map((g) => `${formatOf(g)} ${gateOf(g)}`).sort(), [
      'generic late',
      'ntfy late',
      'slack late',
    ]);
  });

  it('a desktop channel without its program is failing, with a clear error', async () => {
    const empty = tempDir('loopx-notify-nopath-');
    const r: Result = await loopx(['notify', 'test', '--name', 'desktop'], {
      cwd: home,
      env: { ...env, PATH: empty },
    });
    assert.equal(r.code, 1, r.stderr + r.stdout);
    assert.match(r.stdout, /could not send test notice to desktop \(attempt 1\): notify-send is not on PATH/);
    const list = JSON.parse(ok(await run(home, '--json', 'notify', 'list')).stdout) as {
      channels: { name: string; status: string; last_error?: string }[];
    };
    const desktop = list.channels.find((x) => x.name === 'desktop')!;
    assert.equal(desktop.status, 'failing');
    assert.match(desktop.last_error ?? '', /notify-send is not on PATH/);
  });
});
