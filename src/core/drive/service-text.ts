/**
 * The text of the user service that keeps `loopx drive` running (see service.ts): a systemd user
 * unit or a launchd agent. Pure: paths in, file text out.
 *
 * systemd reads each setting its own way, measured with `systemd-analyze verify` (systemd 252):
 * - every value expands `%` specifiers, so `%` is written `%%`;
 * - `ExecStart=` splits on whitespace, understands double quotes with C escapes, and expands
 *   `$NAME` in the arguments (`$$` is a `$`) but not in the executable, where `$$` stays two;
 * - it refuses, as a fatal error, an executable whose path holds a quote or a backslash;
 * - `Environment=` unquotes like `ExecStart=` but expands no `$`;
 * - `WorkingDirectory=` and `Description=` take the rest of the line as it is: no quotes, the
 *   line's trailing whitespace trimmed, and a trailing backslash continues the line.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { usageError } from '../model';

export interface ServiceSpec {
  /** The workspace's absolute real path. */
  workspace: string;
  /** The runtime that runs the CLI (absolute). */
  node: string;
  /** The CLI script (absolute). */
  cli: string;
  /** The environment the service gets (PATH, HOME, LOOPX_CONFIG_DIR when set): nothing else. */
  env: Record<string, string>;
  /** serviceKey(workspace). */
  key: string;
  /** The person's home folder (absolute). */
  home: string;
  /** launchd's GUI domain is per user; process.getuid() when not given. */
  uid?: number;
}

/**
 * A short id of the workspace for file names and labels: the start of workspaceId's hash of the
 * same real path, so two clones never share a service and the name never holds the path itself.
 */
export function serviceKey(workspaceRealPath: string): string {
  return createHash('sha256').update(workspaceRealPath).digest('hex').slice(0, 12);
}

export const SYSTEMD_UNIT_PREFIX = 'loopx-drive-';
export const LAUNCHD_LABEL_PREFIX = 'dev.loopx.drive.';
export const unitName = (key: string) => `${SYSTEMD_UNIT_PREFIX}${key}.service`;
export const launchdLabel = (key: string) => `${LAUNCHD_LABEL_PREFIX}${key}`;
export const launchdLog = (spec: ServiceSpec) =>
  path.join(spec.home, 'Library', 'Logs', `loopx-drive-${spec.key}.log`);

/** What the service runs: the CLI on this workspace, as argv. */
export const driveArgv = (spec: ServiceSpec) => [spec.node, spec.cli, '--workspace', spec.workspace, 'drive'];

// Neither format can carry a control character (XML 1.0 forbids most, a unit file is
// line-oriented): refused rather than written into a file that means something else.
const CONTROL = /[\x00-\x1f\x7f]/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkSpec(spec: ServiceSpec): void {
  if (!/^[0-9a-f]{12}$/.test(spec.key))
    throw usageError(`a service key is 12 hex digits (serviceKey), not ${JSON.stringify(spec.key)}`);
  const paths = { workspace: spec.workspace, runtime: spec.node, 'CLI script': spec.cli, home: spec.home };
  for (const [what, p] of Object.entries(paths)) {
    if (!path.isAbsolute(p))
      throw usageError(`the ${what} must be an absolute path, not ${JSON.stringify(p)}`);
    if (CONTROL.test(p))
      throw usageError(`the ${what} path holds a control character: ${JSON.stringify(p)}`, { field: what });
  }
  for (const [name, value] of Object.entries(spec.env)) {
    if (!ENV_NAME.test(name)) throw usageError(`not an environment variable name: ${JSON.stringify(name)}`);
    if (CONTROL.test(value))
      throw usageError(`${name} holds a control character, which a service file cannot carry`, {
        field: name,
      });
  }
}

/** Names sorted, so the same inputs give the same bytes (a reinstall compares nothing else). */
const sortedEnv = (env: Record<string, string>) =>
  Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const PLAIN = /^[A-Za-z0-9_@%$+=:,./-]+$/;

/**
 * One word of `ExecStart=` or `Environment=`, read back by systemd as `s`. `dollars`: the setting
 * expands `$NAME` here (the arguments of ExecStart), so every `$` is doubled.
 */
function systemdWord(s: string, dollars: boolean): string {
  let t = s.replace(/%/g, '%%');
  if (dollars) t = t.replace(/\$/g, '$$$$');
  return PLAIN.test(s) ? t : `"${t.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function systemdExecStart(argv: string[]): string {
  const [exe = '', ...args] = argv;
  // systemd's string_is_safe: the unit would load as "bad-setting" and never start.
  if (/["'\\]/.test(exe))
    throw usageError(
      `systemd refuses to start a program whose path holds a quote or a backslash: ${exe}. ` +
        'Run LoopX with a Node.js installed at a path without them.',
      { field: 'node' },
    );
  return [systemdWord(exe, false), ...args.map((a) => systemdWord(a, true))].join(' ');
}

/** A value of WorkingDirectory= or Description=: nothing unquotes it, so only `%` can be escaped. */
function systemdLiteral(s: string, what: string): string {
  if (/[\s\\]$/.test(s))
    throw usageError(
      `a systemd unit cannot name a ${what} whose path ends in whitespace or a backslash: ${JSON.stringify(s)}`,
    );
  return s.replace(/%/g, '%%');
}

/** The systemd user unit: started at login, restarted 10 s after a crash. */
export function systemdUnit(o: ServiceSpec): string {
  checkSpec(o);
  const ws = systemdLiteral(o.workspace, 'workspace');
  const env = sortedEnv(o.env).map(([k, v]) => `Environment=${systemdWord(`${k}=${v}`, false)}\n`);
  return `# Written by \`loopx drive --install-service\`; \`loopx drive --uninstall-service\` removes it.
[Unit]
Description=LoopX agents for ${ws}

[Service]
Type=simple
ExecStart=${systemdExecStart(driveArgv(o))}
WorkingDirectory=${ws}
${env.join('')}Restart=on-failure
RestartSec=10
# The driver gets SIGTERM and stops its lanes itself; whatever is left after 30 s is killed.
KillMode=mixed
TimeoutStopSec=30

[Install]
WantedBy=default.target
`;
}

const XML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};
const xml = (s: string) => s.replace(/[&<>"']/g, (c) => XML_ENTITIES[c] ?? c);
const xmlString = (s: string, indent: string) => `${indent}<string>${xml(s)}</string>\n`;
const xmlKey = (s: string, indent: string) => `${indent}<key>${xml(s)}</key>\n`;

/**
 * The launchd agent: loaded at login, started again when it exits with a failure (a crash, a
 * signal), not when it stops on its own. ExitTimeOut gives the driver the 30 s systemd gives it
 * to stop its lanes before launchd kills it. The comment in it names no `--option`: an XML comment
 * may not hold two hyphens.
 */
export function launchdPlist(o: ServiceSpec): string {
  checkSpec(o);
  const log = launchdLog(o);
  const args = driveArgv(o)
    .map((a) => xmlString(a, '    '))
    .join('');
  const env = sortedEnv(o.env)
    .map(([k, v]) => xmlKey(k, '    ') + xmlString(v, '    '))
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by LoopX for "loopx drive" (its install-service option); its uninstall-service option removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key>
${xmlString(launchdLabel(o.key), '  ')}  <key>ProgramArguments</key>
  <array>
${args}  </array>
  <key>WorkingDirectory</key>
${xmlString(o.workspace, '  ')}  <key>EnvironmentVariables</key>
  <dict>
${env}  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ExitTimeOut</key>
  <integer>30</integer>
  <key>StandardOutPath</key>
${xmlString(log, '  ')}  <key>StandardErrorPath</key>
${xmlString(log, '  ')}</dict>
</plist>
`;
}
