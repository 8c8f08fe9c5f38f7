/**
 * `loopx drive --install-service` / `--uninstall-service`: a user service (never a system one,
 * never sudo) that starts `loopx drive` for one workspace at login and again after a crash. A
 * systemd user unit on Linux, a launchd agent on macOS; the text is in service-text.ts.
 *
 * The plan is pure (which file, what text, which commands); installing writes the file and runs
 * the commands through `run`, so a machine without a user service manager (a container, an SSH
 * session without a GUI login) still gets the file and the exact commands to run by hand.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { refused } from '../model';
import { shellQuote } from '../shell';
import { writeFileAtomic } from '../store';
import type { ServiceSpec } from './service-text';
import { driveArgv, launchdLabel, launchdLog, launchdPlist, systemdUnit, unitName } from './service-text';

export type { ServiceSpec } from './service-text';
export { launchdPlist, serviceKey, systemdUnit } from './service-text';

export interface ServicePlan {
  /** `systemd` or `launchd`. */
  platformName: string;
  /** The unit name or the launchd label. */
  name: string;
  file: string;
  text: string;
  /** Commands (argv) that load and start the service, in order. */
  enable: string[][];
  /** Commands (argv) that stop and unload it. */
  disable: string[][];
  /** What a person should know once it runs: where its output goes, how it outlives a logout. */
  notes: string[];
}

export interface RunResult {
  status: number;
  stderr: string;
}
export type RunCommand = (argv: string[]) => RunResult;

/** A command line a person can paste into a POSIX shell. */
const shellLine = (argv: string[]) => argv.map(shellQuote).join(' ');

/** Which file on this platform, with which text and which commands; refuses other platforms. */
export function servicePlan(
  platform: NodeJS.Platform,
  spec: ServiceSpec,
  env: NodeJS.ProcessEnv,
): ServicePlan {
  if (platform === 'linux') {
    // systemd ignores a relative XDG_CONFIG_HOME, as the XDG spec says to.
    const xdg = env.XDG_CONFIG_HOME;
    const config = xdg && path.isAbsolute(xdg) ? xdg : path.join(spec.home, '.config');
    const unit = unitName(spec.key);
    return {
      platformName: 'systemd',
      name: unit,
      file: path.join(config, 'systemd', 'user', unit),
      text: systemdUnit(spec),
      enable: [
        ['systemctl', '--user', 'daemon-reload'],
        ['systemctl', '--user', 'enable', '--now', unit],
      ],
      disable: [['systemctl', '--user', 'disable', '--now', unit]],
      notes: [
        `its output: journalctl --user -u ${unit}`,
        // A user manager runs only while its user has a session, unless lingering is on.
        'it starts when you log in; to start it at boot and keep it running after you log out, run: loginctl enable-linger',
      ],
    };
  }
  if (platform === 'darwin') {
    const label = launchdLabel(spec.key);
    const uid = spec.uid ?? process.getuid?.() ?? 0;
    const file = path.join(spec.home, 'Library', 'LaunchAgents', `${label}.plist`);
    return {
      platformName: 'launchd',
      name: label,
      file,
      text: launchdPlist(spec),
      enable: [['launchctl', 'bootstrap', `gui/${uid}`, file]],
      disable: [['launchctl', 'bootout', `gui/${uid}/${label}`]],
      notes: [`its output: ${launchdLog(spec)}`],
    };
  }
  const command = driveArgv(spec)
    .map((a) => `"${a}"`)
    .join(' ');
  const how =
    platform === 'win32'
      ? `on Windows, \`loopx drive\` can still be run by Task Scheduler: make a task by hand that runs ${command} at log on and restarts it on failure`
      : `start ${command} with this system's service manager by hand`;
  throw refused(
    `LoopX installs a login service only with systemd (Linux) or launchd (macOS), not on ${platform}: ${how}`,
    {
      reason: 'service_unsupported_platform',
      platform,
    },
  );
}

/** The first command of `commands` that fails, with what it said; none when all succeed. */
function runAll(commands: string[][], run: RunCommand): { argv: string[]; result: RunResult } | undefined {
  for (const argv of commands) {
    const result = run(argv);
    if (result.status !== 0) return { argv, result };
  }
  return undefined;
}

/** "`cmd` failed (...)", with the program's own words when it said any. */
function failure(f: { argv: string[]; result: RunResult }): string {
  const said = f.result.stderr.trim().split('\n').slice(0, 3).join(' ').trim();
  const why = f.result.status === 127 ? 'not found' : `exit ${f.result.status}`;
  return `\`${shellLine(f.argv)}\` failed (${why})${said ? `: ${said}` : ''}`;
}

/**
 * Writes the service file (mode 0644, atomically, folders made) and starts it. A reinstall stops
 * the service first, so what runs afterwards is the new file (a new CLI path after an update),
 * not the one the manager loaded before. Never throws for the manager: when a command is missing
 * or fails, the file stays, `started` is false and `notes` say why and what to run by hand.
 */
export function installService(
  plan: ServicePlan,
  run: RunCommand,
): { file: string; started: boolean; notes: string[] } {
  const notes: string[] = [];
  if (fs.existsSync(plan.file)) {
    // A failure here is the old service not running: nothing to stop.
    runAll(plan.disable, run);
    notes.push(`replaced the ${plan.platformName} service ${plan.name} installed before`);
  }
  fs.mkdirSync(path.dirname(plan.file), { recursive: true });
  writeFileAtomic(plan.file, plan.text, 0o644);
  // The mode given at creation is masked by the umask; launchd wants the file readable.
  fs.chmodSync(plan.file, 0o644);
  const failed = runAll(plan.enable, run);
  if (!failed) return { file: plan.file, started: true, notes: [...notes, ...plan.notes] };
  notes.push(
    `could not start the ${plan.platformName} service: ${failure(failed)}`,
    `${plan.file} is written; to start it, run: ${plan.enable.map(shellLine).join(' && ')}`,
  );
  return { file: plan.file, started: false, notes };
}

/**
 * What a manager says when the service is not loaded: uninstalling it is then already done.
 * systemctl: "Unit file ... does not exist", "not loaded"; launchctl: "No such process",
 * "Could not find specified service".
 */
const NOT_LOADED = /not loaded|does not exist|no such process|could not find/i;

/**
 * Stops the service and removes its file. Idempotent: a missing file, or a manager that has not
 * loaded it, is fine and said in notes. A manager that cannot be asked does not keep the file:
 * notes say what to run by hand should it still be running.
 */
export function uninstallService(
  plan: ServicePlan,
  run: RunCommand,
): { file: string; removed: boolean; notes: string[] } {
  const notes: string[] = [];
  const existed = fs.existsSync(plan.file);
  const failed = runAll(plan.disable, run);
  // 127: the manager's command is not on this machine, so nothing can be running under it.
  if (failed && existed && failed.result.status !== 127 && !NOT_LOADED.test(failed.result.stderr))
    notes.push(
      `could not stop the ${plan.platformName} service: ${failure(failed)}`,
      `if it is still running, run: ${plan.disable.map(shellLine).join(' && ')}`,
    );
  fs.rmSync(plan.file, { force: true });
  if (!existed) notes.push(`no ${plan.platformName} service at ${plan.file}: nothing to remove`);
  return { file: plan.file, removed: existed, notes };
}

/**
 * The `run` of install and uninstall on a real machine: the program's exit status and stderr, 127
 * when it is not there (as a shell says), never an exception.
 */
export function runCommand(argv: string[]): RunResult {
  const [program = '', ...args] = argv;
  const r = spawnSync(program, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
    // A manager that hangs (a D-Bus timeout) must not hang the CLI forever.
    timeout: 60_000,
  });
  if (r.error) {
    const missing = (r.error as NodeJS.ErrnoException).code === 'ENOENT';
    return { status: missing ? 127 : 1, stderr: missing ? `${program}: command not found` : r.error.message };
  }
  return { status: r.status ?? 1, stderr: r.stderr || (r.signal ? `killed by ${r.signal}` : '') };
}
