/**
 * "LoopX: Install 'loopx' Command in PATH" and its Uninstall, like VS Code's own `code` command:
 * a small sh shim in a folder on PATH (~/.local/bin by default) that runs the CLI bundled in this
 * extension. The shim reads which CLI and runtime from `cli.target` in the extension's global
 * storage, refreshed on every activation in a trusted window (`refreshCliTarget`), so it keeps
 * working after updates. In Restricted Mode neither command writes (nor does the refresh).
 *
 * Tests and automation pass the folder: `executeCommand('loopx.installCli', { dir })`; then no
 * picker is shown and a `loopx` that is not ours is refused instead of offering another folder.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LoopxError, usageError } from '../../core/model';
import type { ShimInstall } from '../../core/setup';
import {
  cliShimState,
  installCliShim,
  onPath,
  pathHint,
  uninstallCliShim,
  writeCliTarget,
} from '../../core/setup';
import type { Arg, CommandTable } from './shared';
import { argsOf, Cancelled, guardTrust } from './shared';

/** Where installed shims are remembered (globalState), so Uninstall finds one in any folder. */
const INSTALLED_KEY = 'loopx.cliShimFolders';

const defaultBinDir = () => path.join(os.homedir(), '.local', 'bin');

/** Writes the target file the installed shims read; called on every activation. */
export function refreshCliTarget(context: vscode.ExtensionContext): string {
  return writeCliTarget(context.globalStorageUri.fsPath, {
    node: process.execPath,
    cli: path.join(context.extensionPath, 'bin', 'loopx.js'),
  });
}

export function cliInstallCommands(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): CommandTable {
  return {
    'loopx.installCli': (a) => installCli(context, log, a),
    'loopx.uninstallCli': (a) => uninstallCli(context, log, a),
  };
}

/** The folder a test or script passed (`{ dir }`), if any. */
function givenDir(a: Arg): string | undefined {
  const dir = (argsOf(a) as { dir?: unknown }).dir;
  if (dir === undefined) return undefined;
  if (typeof dir !== 'string' || !path.isAbsolute(dir))
    throw usageError(`loopx.installCli: "dir" must be an absolute folder path, not ${JSON.stringify(dir)}`);
  return dir;
}

function checkPlatform(): void {
  if (process.platform === 'win32')
    throw usageError(
      "the 'loopx' command shim is a POSIX sh script: on Windows use VS Code's integrated terminal, where loopx is on PATH already",
    );
}

const writable = (dir: string) => {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
};

/** ~/.local/bin first, then every other folder on PATH the person can write, then "Choose folder...". */
async function pickBinDir(context: vscode.ExtensionContext): Promise<string> {
  const home = defaultBinDir();
  const own = [context.extensionPath, context.globalStorageUri.fsPath];
  const others = [...new Set((process.env.PATH ?? '').split(path.delimiter))]
    .filter((d) => path.isAbsolute(d) && path.resolve(d) !== home && writable(d))
    .filter((d) => !own.some((o) => path.resolve(d).startsWith(o)) && !/node_modules/.test(d));
  type Item = vscode.QuickPickItem & { dir?: string };
  const items: Item[] = [
    {
      label: home,
      description: onPath(home) ? 'recommended, on PATH' : 'recommended (not on PATH yet)',
      dir: home,
    },
    ...others.map((d) => ({ label: d, description: 'on PATH', dir: d })),
    { label: 'Choose folder...', description: 'any folder' },
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: "Install 'loopx' Command in PATH",
    placeHolder: "Where to put the 'loopx' command",
  });
  if (!pick) throw new Cancelled();
  if (pick.dir) return pick.dir;
  const chosen = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    canSelectMany: false,
    openLabel: "Install 'loopx' Here",
    defaultUri: vscode.Uri.file(os.homedir()),
  });
  if (!chosen?.[0]) throw new Cancelled();
  return chosen[0].fsPath;
}

async function installCli(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
  a: Arg,
): Promise<ShimInstall> {
  // Outside the workspace, but a write all the same: Restricted Mode writes nothing.
  await guardTrust();
  checkPlatform();
  const given = givenDir(a);
  const target = refreshCliTarget(context);
  for (;;) {
    const dir = given ?? (await pickBinDir(context));
    try {
      const res = installCliShim(dir, target);
      await remember(context, dir);
      log.info(`loopx command ${res.changed ? 'written to' : 'already in'} ${res.file} (reads ${target})`);
      void announce(res, dir);
      return res;
    } catch (e) {
      if (given || !(e instanceof LoopxError) || e.reason !== 'cli_shim_not_ours') throw e;
      const other = 'Choose Another Folder...';
      const choice = await vscode.window.showWarningMessage(
        `${path.join(dir, 'loopx')} exists and was not written by LoopX, so it is left alone.`,
        { modal: true, detail: 'Choose another folder for the loopx command, or remove that file first.' },
        other,
      );
      if (choice !== other) throw new Cancelled();
    }
  }
}

async function announce(res: ShimInstall, dir: string): Promise<void> {
  const done = `${res.changed ? 'Installed' : 'Already installed:'} ${res.file}.`;
  if (res.onPath) {
    await vscode.window.showInformationMessage(`${done} Run loopx from any terminal.`);
    return;
  }
  const line = pathHint(dir);
  const copy = 'Copy Line';
  const c = await vscode.window.showWarningMessage(
    `${done} ${dir} is not on your PATH: add \`${line}\` to your shell's startup file (~/.profile, ~/.bashrc or ~/.zshrc), then open a new terminal.`,
    copy,
  );
  if (c === copy) await vscode.env.clipboard.writeText(line);
}

async function remember(context: vscode.ExtensionContext, dir: string): Promise<void> {
  const dirs = context.globalState.get<string[]>(INSTALLED_KEY, []);
  if (!dirs.includes(dir)) await context.globalState.update(INSTALLED_KEY, [...dirs, dir]);
}

async function uninstallCli(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
  a: Arg,
): Promise<string[]> {
  await guardTrust();
  checkPlatform();
  const given = givenDir(a);
  const remembered = context.globalState.get<string[]>(INSTALLED_KEY, []);
  // Where a shim of ours may be: the folder given, else every folder it was installed to, the
  // default one, and the folders on PATH (a shim scripts/install.sh wrote carries the marker too).
  const candidates = given
    ? [given]
    : [
        ...new Set([...remembered, defaultBinDir(), ...(process.env.PATH ?? '').split(path.delimiter)]),
      ].filter((d) => path.isAbsolute(d));
  const removed: string[] = [];
  const foreign: string[] = [];
  for (const dir of candidates) {
    const { file, state } = cliShimState(dir);
    if (state === 'ours') removed.push(uninstallCliShim(dir)!);
    else if (state === 'foreign' && (given || remembered.includes(dir))) foreign.push(file);
  }
  await context.globalState.update(
    INSTALLED_KEY,
    remembered.filter((d) => !candidates.includes(d)),
  );
  for (const f of removed) log.info(`loopx command removed: ${f}`);
  const kept = foreign.length ? ` Left alone (not written by LoopX): ${foreign.join(', ')}.` : '';
  if (removed.length) void vscode.window.showInformationMessage(`Removed ${removed.join(', ')}.${kept}`);
  else
    void vscode.window.showInformationMessage(
      `No 'loopx' command installed by LoopX was found (looked in ${given ?? `${defaultBinDir()} and the folders on PATH`}).${kept}`,
    );
  return removed;
}
