/**
 * `loopx drive --install-service` on Linux: a systemd user unit written where systemd looks for
 * one (under XDG_CONFIG_HOME), that runs this CLI on this workspace, that systemd itself accepts;
 * on a machine whose user manager cannot be reached (this container, an SSH session) the file is
 * still written and the person is told what to run by hand. `--uninstall-service` removes it and
 * can be run again. The tests point HOME, XDG_CONFIG_HOME, XDG_RUNTIME_DIR and the session bus at
 * temp folders: they never reach a real user's service manager, whatever machine runs them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { BIN, json, loopx, ok, removeTempDirs, show, tempDir } from '../helpers/cli';

const Installed = z.strictObject({
  platform: z.literal('systemd'),
  file: z.string(),
  started: z.boolean(),
  notes: z.array(z.string()),
});
const Removed = z.strictObject({
  platform: z.literal('systemd'),
  file: z.string(),
  removed: z.boolean(),
  notes: z.array(z.string()),
});

describe(
  'loopx drive --install-service (systemd, no user bus)',
  { skip: process.platform !== 'linux' },
  () => {
    let ws: string;
    let home: string;
    let xdg: string;
    let runtimeDir: string;
    let env: Record<string, string>;
    let unitFile: string;
    const run = (...args: string[]) => loopx(args, { cwd: ws, env });

    before(async () => {
      ws = tempDir('lxd-svc-ws-');
      home = tempDir('lxd-svc-home-');
      xdg = path.join(home, 'xdg-config');
      // systemd wants its runtime folder private to the user.
      runtimeDir = tempDir('lxd-svc-run-');
      fs.chmodSync(runtimeDir, 0o700);
      env = {
        HOME: home,
        XDG_CONFIG_HOME: xdg,
        XDG_RUNTIME_DIR: runtimeDir,
        // No bus there: systemctl --user fails as it does in a container, on any machine.
        DBUS_SESSION_BUS_ADDRESS: `unix:path=${path.join(runtimeDir, 'bus')}`,
        LOOPX_CONFIG_DIR: tempDir('lxd-svc-config-'),
      };
      ok(await loopx(['init'], { cwd: ws, env }));
      const key = createHash('sha256').update(fs.realpathSync(ws)).digest('hex').slice(0, 12);
      unitFile = path.join(xdg, 'systemd', 'user', `loopx-drive-${key}.service`);
    });
    after(removeTempDirs);

    it('writes the unit, says it could not start it and what to run by hand, and exits 0', async () => {
      const r = ok(await run('drive', '--install-service'));
      assert.ok(fs.existsSync(unitFile), `expected ${unitFile}\n${show(r)}`);
      assert.equal(fs.statSync(unitFile).mode & 0o777, 0o644);
      const unit = path.basename(unitFile);
      assert.match(r.stdout, new RegExp(`^systemd: wrote ${esc(unitFile)}$`, 'm'), show(r));
      assert.match(
        r.stdout,
        /could not start the systemd service: `systemctl --user daemon-reload` failed \(exit 1\): Failed to connect to bus/,
        show(r),
      );
      assert.match(
        r.stdout,
        new RegExp(
          `to start it, run: systemctl --user daemon-reload && systemctl --user enable --now ${esc(unit)}$`,
          'm',
        ),
        show(r),
      );
      assert.doesNotMatch(r.stdout, /and started it/);
    });

    it('runs this CLI on this workspace: ExecStart is `<node> <cli> --workspace <ws> drive`, in the workspace', () => {
      const text = fs.readFileSync(unitFile, 'utf8');
      const line = (key: string) => text.split('\n').filter((l) => l.startsWith(`${key}=`));
      const real = fs.realpathSync(ws);
      assert.deepEqual(line('ExecStart'), [`ExecStart=${process.execPath} ${BIN} --workspace ${real} drive`]);
      assert.deepEqual(line('WorkingDirectory'), [`WorkingDirectory=${real}`]);
      assert.ok(line('Environment').includes(`Environment=HOME=${home}`), text);
      assert.ok(line('Environment').includes(`Environment=LOOPX_CONFIG_DIR=${env.LOOPX_CONFIG_DIR}`), text);
      // Only what the driver needs: not the session bus, not the test's runtime folder.
      assert.deepEqual(
        line('Environment')
          .map((l) => l.slice('Environment='.length).split('=')[0])
          .sort(),
        ['HOME', 'LOOPX_CONFIG_DIR', 'PATH'],
      );
      assert.deepEqual(line('Restart'), ['Restart=on-failure']);
      assert.deepEqual(line('WantedBy'), ['WantedBy=default.target']);
    });

    it(
      'is a unit systemd accepts (systemd-analyze --user verify)',
      { skip: !hasProgram('systemd-analyze') },
      () => {
        const r = spawnSync('systemd-analyze', ['--user', 'verify', unitFile], {
          encoding: 'utf8',
          env: { ...process.env, ...env },
          timeout: 60_000,
        });
        assert.equal(r.status, 0, `systemd-analyze verify: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
        // A setting systemd ignores is a warning, not a failure: the unit must have none.
        assert.doesNotMatch(
          r.stderr,
          new RegExp(`${esc(path.basename(unitFile))}|ignoring|Refusing`),
          r.stderr,
        );
      },
    );

    it('--json prints the platform, the file, whether it started and the notes; a reinstall says it replaced the unit', async () => {
      const doc = json(await run('--json', 'drive', '--install-service'), Installed);
      assert.equal(doc.file, unitFile);
      assert.equal(doc.started, false);
      assert.match(
        doc.notes[0]!,
        /^replaced the systemd service loopx-drive-[0-9a-f]{12}\.service installed before$/,
      );
      assert.ok(
        doc.notes.some((n) => /^could not start the systemd service: /.test(n)),
        doc.notes.join('\n'),
      );
      assert.ok(
        doc.notes.some((n) => n.startsWith(`${unitFile} is written; to start it, run: `)),
        doc.notes.join('\n'),
      );
    });

    it('--uninstall-service removes the unit, and a second time is a no-op that says so', async () => {
      const first = json(await run('--json', 'drive', '--uninstall-service'), Removed);
      assert.equal(first.file, unitFile);
      assert.equal(first.removed, true);
      assert.ok(!fs.existsSync(unitFile), 'the unit file is gone');
      // The manager could not be asked: the person is told how to stop a copy that may still run.
      assert.ok(
        first.notes.some((n) => /^if it is still running, run: systemctl --user disable --now /.test(n)),
        first.notes.join('\n'),
      );

      const again = ok(await run('drive', '--uninstall-service'));
      assert.match(
        again.stdout,
        new RegExp(`^systemd: nothing to remove at ${esc(unitFile)}$`, 'm'),
        show(again),
      );
      const doc = json(await run('--json', 'drive', '--uninstall-service'), Removed);
      assert.equal(doc.removed, false);
      assert.deepEqual(doc.notes, [`no systemd service at ${unitFile}: nothing to remove`]);
      assert.deepEqual(fs.readdirSync(path.dirname(unitFile)), []);
    });

    it('refuses --install-service with --uninstall-service (usage error, nothing written)', async () => {
      const r = await run('drive', '--install-service', '--uninstall-service');
      assert.equal(r.code, 2, show(r));
      assert.match(r.stderr, /--install-service and --uninstall-service: choose one/);
      assert.ok(!fs.existsSync(unitFile));
    });
  },
);

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function hasProgram(name: string): boolean {
  return spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0;
}
