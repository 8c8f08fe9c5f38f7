/**
 * The user service of `loopx drive --install-service` (core/drive/service.ts): the unit and plist
 * text, read back the way systemd and launchd read it; where the files go; install and uninstall
 * with a fake service manager; and, where this machine has it, `systemd-analyze verify`.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunResult, ServicePlan, ServiceSpec } from '../../../../src/core/drive/service';
import {
  installService,
  launchdPlist,
  runCommand,
  serviceKey,
  servicePlan,
  systemdUnit,
  uninstallService,
} from '../../../../src/core/drive/service';
import { LoopxError } from '../../../../src/core/model/errors';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function tmp(prefix = "loopx-service it's 100%$ "): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

const SIMPLE: ServiceSpec = {
  workspace: '/home/ann/proj',
  node: '/usr/bin/node',
  cli: '/opt/loopx/dist/cli.js',
  env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/home/ann' },
  key: serviceKey('/home/ann/proj'),
  home: '/home/ann',
  uid: 501,
};

const WEIRD_WS = `/tmp/a b/it's "x" 100%$HOME`;
const WEIRD: ServiceSpec = {
  workspace: WEIRD_WS,
  // systemd refuses quotes and backslashes in the executable, so only the rest is tried here.
  node: '/opt/my node 100%$x/bin/node',
  cli: `/tmp/c\\d/it's "cli" %i $HOME/cli.js`,
  env: { PATH: '/a b:/c%d:$PATH', HOME: '/home/a "b"', LOOPX_CONFIG_DIR: `/tmp/x\\y's\\` },
  key: serviceKey(WEIRD_WS),
  home: '/home/a "b"',
  uid: 501,
};
const argvOf = (s: ServiceSpec) => [s.node, s.cli, '--workspace', s.workspace, 'drive'];

// ---- systemd's reading of a unit (systemd 252, load-fragment.c), written out for the test ----

/** `%%` is `%`; any other specifier would mean the unit left a `%` unescaped. */
const specifiers = (s: string) =>
  s.replace(/%(.?)/g, (_, c: string) => {
    if (c !== '%') throw new Error(`unescaped specifier %${c} in ${s}`);
    return '%';
  });

/** extract_first_word(UNQUOTE|CUNESCAPE): whitespace splits, quotes group, a backslash escapes. */
function words(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (i >= s.length) return out;
    let w = '';
    let quote = '';
    for (; i < s.length; i++) {
      const c = s[i]!;
      if (c === '\\') {
        const n = s[++i];
        if (n === undefined || !`\\"'`.includes(n)) throw new Error(`escape \\${n} in ${s}`);
        w += n;
      } else if (quote) {
        if (c === quote) quote = '';
        else w += c;
      } else if (c === '"' || c === "'") quote = c;
      else if (/\s/.test(c)) break;
      else w += c;
    }
    if (quote) throw new Error(`unbalanced quote in ${s}`);
    out.push(w);
  }
}

/** `$$` is `$` in ExecStart's arguments; a single `$` would be a variable systemd expands. */
const dollars = (s: string) =>
  s.replace(/\$(.?)/g, (_, c: string) => {
    if (c !== '$') throw new Error(`unescaped variable $${c} in ${s}`);
    return '$';
  });

/** The unit's settings, each with all its values; checks no line continues onto the next. */
function settings(unit: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of unit.split('\n')) {
    assert.ok(!line.endsWith('\\'), `a trailing backslash continues the line: ${line}`);
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[2]!.trim()]);
  }
  return out;
}

/** What systemd would run, what environment it would give, and where. */
function readUnit(unit: string) {
  const s = settings(unit);
  const [exe, ...args] = words(specifiers(s.get('ExecStart')![0]!));
  const env = Object.fromEntries(
    (s.get('Environment') ?? [])
      .flatMap((v) => words(specifiers(v)))
      .map((a) => a.split(/=(.*)/s).slice(0, 2)),
  );
  return {
    argv: [exe!, ...args.map(dollars)],
    env,
    cwd: specifiers(s.get('WorkingDirectory')![0]!),
    description: specifiers(s.get('Description')![0]!),
  };
}

// ---- launchd's reading of a plist: its <string> values, entities undone ----

function plistStrings(xml: string): string[] {
  const entities: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
  return [...xml.matchAll(/<(string|key)>([^<]*)<\/\1>/g)].map((m) => {
    assert.doesNotMatch(m[2]!, /&(?!(lt|gt|quot|apos|amp);)|["']/, 'every & " \' is an entity');
    return m[2]!.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => entities[e]!);
  });
}

const hasPython = spawnSync('python3', ['-c', 'import plistlib'], { stdio: 'ignore' }).status === 0;
const hasSystemdAnalyze = !spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).error;

describe('the service key', () => {
  it('is the first 12 hex digits of the sha256 of the real path: stable, one per workspace', () => {
    const want = createHash('sha256').update('/home/ann/proj').digest('hex').slice(0, 12);
    assert.equal(serviceKey('/home/ann/proj'), want);
    assert.match(want, /^[0-9a-f]{12}$/);
    assert.notEqual(serviceKey('/home/ann/proj2'), want);
  });
});

describe('the systemd user unit', () => {
  it('for a plain workspace, reads as written here', () => {
    assert.equal(
      systemdUnit(SIMPLE),
      `# Written by \`loopx drive --install-service\`; \`loopx drive --uninstall-service\` removes it.
[Unit]
Description=LoopX agents for /home/ann/proj

[Service]
Type=simple
ExecStart=/usr/bin/node /opt/loopx/dist/cli.js --workspace /home/ann/proj drive
WorkingDirectory=/home/ann/proj
Environment=HOME=/home/ann
Environment=PATH=/usr/local/bin:/usr/bin:/bin
Restart=on-failure
RestartSec=10
# The driver gets SIGTERM and stops its lanes itself; whatever is left after 30 s is killed.
KillMode=mixed
TimeoutStopSec=30

[Install]
WantedBy=default.target
`,
    );
  });

  it('gives back the same argv, environment and folder for paths with spaces, quotes, % and $', () => {
    const unit = systemdUnit(WEIRD);
    const read = readUnit(unit);
    assert.deepEqual(read.argv, argvOf(WEIRD));
    assert.deepEqual(read.env, WEIRD.env);
    assert.equal(read.cwd, WEIRD_WS);
    assert.equal(read.description, `LoopX agents for ${WEIRD_WS}`);
    // The executable is the one word where systemd does not turn `$$` into `$`.
    assert.match(unit, /^ExecStart="\/opt\/my node 100%%\$x\/bin\/node" /m);
  });

  it('refuses what systemd could not read back or would refuse to start', () => {
    const bad: Partial<ServiceSpec>[] = [
      { node: "/home/o'brien/bin/node" },
      { node: '/opt/a\\b/node' },
      { workspace: '/tmp/ends in a backslash\\' },
      { workspace: '/tmp/ends in a space ' },
      { workspace: '/tmp/new\nline' },
      { cli: 'relative/cli.js' },
      { env: { 'NOT A NAME': 'x' } },
      { env: { PATH: 'a\rb' } },
      { key: '../../etc/xx' },
    ];
    for (const b of bad)
      assert.throws(
        () => systemdUnit({ ...SIMPLE, ...b }),
        (e: unknown) => e instanceof LoopxError && e.kind === 'usage',
        JSON.stringify(b),
      );
  });
});

describe('the launchd agent', () => {
  it('holds the label, the argv, the folder, the environment and the log, every string escaped', () => {
    const xml = launchdPlist(WEIRD);
    const log = `${WEIRD.home}/Library/Logs/loopx-drive-${WEIRD.key}.log`;
    assert.deepEqual(plistStrings(xml), [
      'Label',
      `dev.loopx.drive.${WEIRD.key}`,
      'ProgramArguments',
      ...argvOf(WEIRD),
      'WorkingDirectory',
      WEIRD_WS,
      'EnvironmentVariables',
      ...['HOME', WEIRD.env.HOME, 'LOOPX_CONFIG_DIR', WEIRD.env.LOOPX_CONFIG_DIR, 'PATH', WEIRD.env.PATH],
      'RunAtLoad',
      'KeepAlive',
      'SuccessfulExit',
      'ExitTimeOut',
      'StandardOutPath',
      log,
      'StandardErrorPath',
      log,
    ]);
    assert.match(xml, /<key>RunAtLoad<\/key>\s*<true\/>/);
    assert.match(xml, /<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>\s*<\/dict>/);
  });

  it('is a property list Python reads back to the same values', { skip: !hasPython && 'no python3' }, () => {
    const r = spawnSync(
      'python3',
      ['-c', 'import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))'],
      { input: launchdPlist(WEIRD), encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    const log = `${WEIRD.home}/Library/Logs/loopx-drive-${WEIRD.key}.log`;
    assert.deepEqual(JSON.parse(r.stdout), {
      Label: `dev.loopx.drive.${WEIRD.key}`,
      ProgramArguments: argvOf(WEIRD),
      WorkingDirectory: WEIRD_WS,
      EnvironmentVariables: WEIRD.env,
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ExitTimeOut: 30,
      StandardOutPath: log,
      StandardErrorPath: log,
    });
  });
});

describe('the plan for each platform', () => {
  it('Linux: a unit under XDG_CONFIG_HOME, else ~/.config, and the systemctl --user commands', () => {
    const unit = `loopx-drive-${SIMPLE.key}.service`;
    const p = servicePlan('linux', SIMPLE, { XDG_CONFIG_HOME: '/x/cfg' });
    assert.equal(p.file, `/x/cfg/systemd/user/${unit}`);
    assert.equal(p.text, systemdUnit(SIMPLE));
    assert.equal(p.platformName, 'systemd');
    assert.deepEqual(p.enable, [
      ['systemctl', '--user', 'daemon-reload'],
      ['systemctl', '--user', 'enable', '--now', unit],
    ]);
    assert.deepEqual(p.disable, [['systemctl', '--user', 'disable', '--now', unit]]);
    assert.equal(servicePlan('linux', SIMPLE, {}).file, `/home/ann/.config/systemd/user/${unit}`);
    assert.equal(
      servicePlan('linux', SIMPLE, { XDG_CONFIG_HOME: 'relative' }).file,
      `/home/ann/.config/systemd/user/${unit}`,
    );
  });

  it('macOS: an agent in ~/Library/LaunchAgents, bootstrapped in the gui domain of the uid', () => {
    const label = `dev.loopx.drive.${SIMPLE.key}`;
    const p = servicePlan('darwin', SIMPLE, { XDG_CONFIG_HOME: '/x/cfg' });
    assert.equal(p.file, `/home/ann/Library/LaunchAgents/${label}.plist`);
    assert.equal(p.text, launchdPlist(SIMPLE));
    assert.equal(p.platformName, 'launchd');
    assert.deepEqual(p.enable, [['launchctl', 'bootstrap', 'gui/501', p.file]]);
    assert.deepEqual(p.disable, [['launchctl', 'bootout', `gui/501/${label}`]]);
  });

  it('any other platform is refused with its reason, Windows told about Task Scheduler', () => {
    for (const platform of ['win32', 'freebsd'] as const)
      assert.throws(
        () => servicePlan(platform, SIMPLE, {}),
        (e: unknown) =>
          e instanceof LoopxError &&
          e.kind === 'refused' &&
          e.reason === 'service_unsupported_platform' &&
          (platform !== 'win32' || /Task Scheduler/.test(e.message)),
      );
  });
});

/** A service manager that answers each command with `answer` and records what it was asked. */
function fakeManager(answer: (argv: string[]) => RunResult = () => ({ status: 0, stderr: '' })) {
  const calls: string[][] = [];
  return { calls, run: (argv: string[]) => (calls.push(argv), answer(argv)) };
}

function linuxPlan(): ServicePlan {
  return servicePlan('linux', SIMPLE, { XDG_CONFIG_HOME: path.join(tmp(), 'config') });
}

describe('installing and uninstalling', () => {
  it('writes the file (0644, folders made, by a rename) and starts it', () => {
    const plan = linuxPlan();
    const m = fakeManager();
    // A private umask must not leave launchd or systemd a file only its owner can read.
    const umask = process.umask(0o077);
    let r;
    try {
      r = installService(plan, m.run);
    } finally {
      process.umask(umask);
    }
    assert.equal(r.started, true);
    assert.equal(r.file, plan.file);
    assert.equal(fs.readFileSync(plan.file, 'utf8'), plan.text);
    assert.equal(fs.statSync(plan.file).mode & 0o777, 0o644);
    assert.deepEqual(m.calls, plan.enable);
    assert.deepEqual(
      fs.readdirSync(path.dirname(plan.file)),
      [path.basename(plan.file)],
      'no temp file left',
    );
    assert.ok(r.notes.some((n) => n.includes('journalctl --user -u')));
  });

  it('a reinstall stops the old service, replaces the file by a new one, and starts it', () => {
    const plan = linuxPlan();
    fs.mkdirSync(path.dirname(plan.file), { recursive: true });
    fs.writeFileSync(plan.file, 'old', { mode: 0o600 });
    const before = fs.statSync(plan.file).ino;
    const m = fakeManager();
    assert.equal(installService(plan, m.run).started, true);
    assert.deepEqual(m.calls, [...plan.disable, ...plan.enable]);
    assert.equal(fs.readFileSync(plan.file, 'utf8'), plan.text);
    assert.notEqual(fs.statSync(plan.file).ino, before, 'a new file renamed into place, not rewritten');
    assert.equal(fs.statSync(plan.file).mode & 0o777, 0o644);
  });

  it('without a user service manager keeps the file and says what to run by hand, and why', () => {
    const plan = linuxPlan();
    const m = fakeManager(() => ({ status: 127, stderr: 'systemctl: command not found' }));
    const r = installService(plan, m.run);
    assert.equal(r.started, false);
    assert.equal(fs.readFileSync(plan.file, 'utf8'), plan.text);
    assert.equal(m.calls.length, 1, 'stops at the first failure');
    const text = r.notes.join('\n');
    assert.match(text, /systemctl: command not found/);
    assert.ok(
      text.includes(`systemctl --user daemon-reload && systemctl --user enable --now ${plan.name}`),
      text,
    );
  });

  it('a manager that fails later is reported with its own words', () => {
    const plan = linuxPlan();
    const m = fakeManager((a) =>
      a.includes('enable')
        ? { status: 1, stderr: 'Failed to connect to bus: No medium found\n' }
        : { status: 0, stderr: '' },
    );
    const r = installService(plan, m.run);
    assert.equal(r.started, false);
    assert.match(
      r.notes.join('\n'),
      /enable --now .*failed \(exit 1\): Failed to connect to bus: No medium found/,
    );
  });

  it('uninstall stops and removes it; again is fine and says there was nothing', () => {
    const plan = linuxPlan();
    installService(plan, fakeManager().run);
    const m = fakeManager();
    const r = uninstallService(plan, m.run);
    assert.deepEqual(r, { file: plan.file, removed: true, notes: [] });
    assert.deepEqual(m.calls, plan.disable);
    assert.equal(fs.existsSync(plan.file), false);
    const notLoaded = fakeManager(() => ({
      status: 1,
      stderr: `Failed to disable unit: Unit file ${plan.name} does not exist.`,
    }));
    const again = uninstallService(plan, notLoaded.run);
    assert.equal(again.removed, false);
    assert.deepEqual(again.notes, [`no systemd service at ${plan.file}: nothing to remove`]);
  });

  it('uninstall removes the file even when the manager cannot be asked, and says what to run', () => {
    const plan = linuxPlan();
    installService(plan, fakeManager().run);
    const r = uninstallService(
      plan,
      fakeManager(() => ({ status: 1, stderr: 'Failed to connect to bus' })).run,
    );
    assert.equal(r.removed, true);
    assert.equal(fs.existsSync(plan.file), false);
    assert.match(r.notes.join('\n'), /Failed to connect to bus[\s\S]*systemctl --user disable --now/);
    const notLoaded = fakeManager(() => ({ status: 3, stderr: 'Boot-out failed: 3: No such process' }));
    installService(plan, fakeManager().run);
    assert.deepEqual(uninstallService(plan, notLoaded.run).notes, [], 'not loaded: already stopped');
  });

  it('the real runner gives the status and stderr, and 127 for a missing program', () => {
    assert.deepEqual(runCommand([process.execPath, '-e', 'process.stderr.write("no"); process.exit(3)']), {
      status: 3,
      stderr: 'no',
    });
    assert.equal(runCommand(['loopx-no-such-program-here']).status, 127);
  });
});

describe('systemd itself', () => {
  it(
    'systemd-analyze verify finds nothing wrong with a unit for awkward real paths',
    { skip: !hasSystemdAnalyze && 'no systemd-analyze on this machine' },
    () => {
      // No quote in the runtime's path: systemd refuses one there (tested above).
      const root = tmp('loopx-service 100%$ ');
      const config = path.join(root, 'config');
      const runtime = path.join(root, 'run');
      fs.mkdirSync(runtime, { mode: 0o700 });
      // Real files at awkward paths: verify fails when the executable it reads back is not there.
      const bin = path.join(root, 'bin 100%$x');
      fs.mkdirSync(bin);
      fs.symlinkSync(process.execPath, path.join(bin, 'node'));
      const cli = path.join(root, `it's "cli" %i $HOME`, 'cli.js');
      fs.mkdirSync(path.dirname(cli));
      fs.writeFileSync(cli, '');
      const workspace = path.join(root, `ws it's "x" 100%$HOME`);
      fs.mkdirSync(workspace);
      const spec: ServiceSpec = {
        workspace,
        node: path.join(bin, 'node'),
        cli,
        env: { PATH: `${bin}:/usr/bin:/bin`, HOME: root },
        key: serviceKey(workspace),
        home: root,
      };
      const verify = (unit: string) => {
        const plan = servicePlan(
          'linux',
          { ...spec, ...(unit ? { node: unit } : {}) },
          { XDG_CONFIG_HOME: config },
        );
        installService(plan, fakeManager().run);
        const env = { ...process.env, XDG_CONFIG_HOME: config, XDG_RUNTIME_DIR: runtime };
        let r = spawnSync('systemd-analyze', ['verify', '--user', plan.file], { env, encoding: 'utf8' });
        // A container with no user session: the system manager's reading of the file is the same.
        if (/Failed to initialize manager/.test(r.stderr))
          r = spawnSync('systemd-analyze', ['verify', plan.file], { env, encoding: 'utf8' });
        return { status: r.status, said: `${r.stdout}${r.stderr}`, name: plan.name };
      };
      const ok = verify('');
      assert.equal(ok.status, 0, ok.said);
      assert.ok(!ok.said.includes(ok.name), ok.said);
      // The check has teeth: a runtime that is not there is reported.
      const missing = verify(path.join(bin, 'no-node'));
      assert.notEqual(missing.status, 0);
      assert.match(missing.said, /is not executable|No such file/);
    },
  );
});
