/**
 * `loopx install-command`: puts this running CLI on PATH for use outside VS Code. Its files are
 * copied to DIR/share/loopx/<version>/, and DIR/bin/loopx is the same shim VS Code's "Install
 * 'loopx' Command in PATH" writes (src/core/setup/cli-shim.ts), reading DIR/share/loopx/cli.target; so
 * a new version rewrites the target, not the shim. scripts/install.sh only finds (or unpacks) a
 * CLI and runs this.
 */
import type { Command } from 'commander';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import cliFiles from '../../../packaging/cli/files.json';
import { notFound, usageError } from '../../core/index';
import type { ShimOrigin } from '../../core/setup';
import {
  CLI_TARGET,
  cliShimScript,
  installCliShim,
  onPath,
  pathHint,
  replaceableCliShim,
  shimTargetText,
  writeCliTarget,
} from '../../core/setup';
import { fileDiffers, writeIfChanged } from '../../core/store';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, runningCli, VERSION } from '../define';

/**
 * What the CLI needs at run time (packaging/cli/files.json, the one list the tarball, this
 * command and the tests share): bin/loopx.js runs ../dist/cli.js, which loads ./mcp.js; the
 * status server's dashboard page serves dist/webview.js and media/*.css (src/server/assets.ts).
 */
const CLI_FILES: readonly string[] = cliFiles;

const ORIGIN: ShimOrigin = {
  installedBy: 'by `scripts/install.sh` / `loopx install-command`',
  reinstall: 'run `scripts/install.sh` again',
  runtime: 'the runtime recorded at install',
};

interface FileChange {
  path: string;
  changed: boolean;
}

export interface InstallCommandResult {
  schema: 'loopx.install-command/1';
  prefix: string;
  version: string;
  /** The folder the files were copied from (the running CLI's). */
  source: string;
  shim: string;
  target: string;
  files: FileChange[];
  on_path: boolean;
  dry_run: boolean;
}

/** The install folder: --prefix, else LOOPX_PREFIX, else ~/.local; absolute, one line. */
function prefixOf(ctx: CliContext, flag: string | undefined): string {
  const [given, from] =
    flag !== undefined ? [flag, '--prefix'] : [ctx.io.env.LOOPX_PREFIX || undefined, 'LOOPX_PREFIX'];
  if (given === undefined) return path.join(os.homedir(), '.local');
  if (given.trim() === '') throw usageError(`${from} needs a folder, not an empty string`);
  if (/[\r\n]/.test(given))
    throw usageError(`${from} must be a folder path without line breaks, not ${JSON.stringify(given)}`);
  return path.resolve(ctx.io.cwd, given);
}

/** The running CLI's folder (the one holding bin/ and dist/), with every file it needs. */
function sourceRoot(): string {
  const entry = runningCli();
  const root = path.dirname(path.dirname(entry));
  const missing = CLI_FILES.filter((f) => {
    try {
      return fs.statSync(path.join(root, f)).size === 0;
    } catch {
      return true;
    }
  });
  if (path.basename(entry) !== 'loopx.js' || missing.length)
    throw notFound(
      `cannot find the CLI's files next to ${entry} (${(missing.length ? missing : CLI_FILES).join(', ')} under ${root}): run install-command from a built loopx (\`npm run build\`, then \`node bin/loopx.js install-command\`)`,
      { reason: 'cli_files_missing' },
    );
  return root;
}

export function installCommand(
  ctx: CliContext,
  o: { prefix?: string; dryRun?: boolean },
): InstallCommandResult {
  if (process.platform === 'win32')
    throw usageError(
      'install-command writes a POSIX sh shim: on Windows, install the CLI tarball with npm instead (README, "Install")',
    );
  const prefix = prefixOf(ctx, o.prefix);
  const binDir = path.join(prefix, 'bin');
  const share = path.join(prefix, 'share', 'loopx');
  const home = path.join(share, VERSION);
  // Before anything is copied: a `loopx` that is not ours stays, and nothing else is written.
  const shimFile = replaceableCliShim(binDir).file;
  const source = sourceRoot();
  const dryRun = o.dryRun === true;

  const files: FileChange[] = CLI_FILES.map((f) => {
    const to = path.join(home, f);
    const content = fs.readFileSync(path.join(source, f));
    if (dryRun) return { path: to, changed: fileDiffers(to, content) };
    fs.mkdirSync(path.dirname(to), { recursive: true });
    return { path: to, changed: writeIfChanged(to, content, f === 'bin/loopx.js' ? 0o755 : 0o644) };
  });
  // bin/loopx.js is CommonJS: a package.json of ours keeps one above it (`"type": "module"` in a
  // package.json in the home folder, say) from making Node read it as an ES module.
  const manifest = path.join(home, 'package.json');
  const manifestText = `${JSON.stringify({ name: 'loopx-cli', version: VERSION, private: true, type: 'commonjs' })}\n`;
  files.push({
    path: manifest,
    changed: dryRun ? fileDiffers(manifest, manifestText) : writeIfChanged(manifest, manifestText, 0o644),
  });

  const target = path.join(share, CLI_TARGET);
  const cli = { node: process.execPath, cli: path.join(home, 'bin', 'loopx.js') };
  files.push({ path: target, changed: fileDiffers(target, shimTargetText(cli)) });
  if (!dryRun) writeCliTarget(share, cli);

  const pathVar = ctx.io.env.PATH ?? '';
  const shim = dryRun
    ? { file: shimFile, changed: fileDiffers(shimFile, cliShimScript(target, ORIGIN)) }
    : installCliShim(binDir, target, pathVar, ORIGIN);
  files.push({ path: shim.file, changed: shim.changed });

  return {
    schema: 'loopx.install-command/1',
    prefix,
    version: VERSION,
    source,
    shim: shim.file,
    target,
    files,
    on_path: onPath(binDir, pathVar),
    dry_run: dryRun,
  };
}

export function installCommandText(r: InstallCommandResult): string {
  const binDir = path.dirname(r.shim);
  const verb = (f: FileChange) => (!f.changed ? 'unchanged' : r.dry_run ? 'would write' : 'wrote');
  return [
    `loopx ${r.version} from ${r.source}${r.dry_run ? ' (dry run: nothing written)' : ''}`,
    ...r.files.map((f) => `  ${verb(f).padEnd(12)}${f.path}`),
    ...(r.on_path
      ? [`${binDir} is on PATH: run \`loopx --version\``]
      : [
          `${binDir} is not on PATH: add this line to your shell's startup file (~/.profile, ~/.bashrc or ~/.zshrc), then open a new terminal:`,
          `  ${pathHint(binDir)}`,
        ]),
  ].join('\n');
}

export function registerInstallCommand(program: Command, act: Act) {
  example(
    program
      .command('install-command')
      .description(
        'install this loopx for use outside VS Code: copies its files to DIR/share/loopx/<version>/ and writes the `loopx` shim DIR/bin/loopx (DIR: --prefix, else LOOPX_PREFIX, else ~/.local). Safe to run again; never replaces a `loopx` that LoopX did not write (exit 4)',
      )
      .option('--prefix <dir>', 'the install folder (default: LOOPX_PREFIX, else ~/.local)')
      .option('--dry-run', 'say what would be written, and write nothing')
      .action(
        act((ctx, o: { prefix?: string; dryRun?: boolean }) => {
          const r = installCommand(ctx, o);
          ctx.print(r, () => installCommandText(r));
        }),
      ),
    'node bin/loopx.js install-command',
    'loopx install-command --prefix /opt/loopx --dry-run --json',
  );
}
