#!/usr/bin/env node
// The standalone CLI tarball, loopx-cli-<version>.tgz: the package `loopx-cli` (bin `loopx`) with
// only the shim and the bundles it runs, so `npm install -g ./loopx-cli-<version>.tgz` works with
// no network (everything is bundled: no dependencies). `npm run package` makes it next to the
// .vsix (scripts/build/package.mjs calls this); alone:
//
//   node scripts/build/package-cli.mjs [-o DIR] [--no-build]
//
// The repository's own package.json is the extension's (no `dist/` in `npm pack`, devDependencies
// galore), so the tarball is packed from a staging folder: packaging/cli/ (manifest template and
// README) plus copies of the files below, then `npm pack --pack-destination`. Importable:
//   const { packageCli } = await import('./package-cli.mjs'); packageCli({ out: dir });
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nestedNpmEnv } from '../hosts/vscode-host/npm-env.mjs';
import { ROOT, buildDist, run, shownPath } from './packaging-steps.mjs';

export { ROOT };

/**
 * The run-time files (packaging/cli/files.json, shared with `loopx install-command`): bin/loopx.js
 * finds ../dist/cli.js next to itself; cli.js loads ./mcp.js; the status server's dashboard page
 * (`/`) serves dist/webview.js and the two style sheets in media/.
 */
export const CLI_FILES = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'packaging', 'cli', 'files.json'), 'utf8'),
);
/** Everything the tarball holds (npm adds README and LICENSE to every package it packs). */
export const CLI_TARBALL_FILES = [...CLI_FILES, 'LICENSE', 'README.md', 'package.json'].sort();

/** Copies the files into a new staging folder with the manifest for `version`; returns the folder. */
export function stageCli(version) {
  for (const f of CLI_FILES) {
    const p = path.join(ROOT, f);
    const text = fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : '';
    if (!text.trim() || (f.endsWith('.js') && !text.includes('loopx')))
      throw new Error(`${f} is missing or empty: run \`npm run build\` first`);
  }
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cli-stage-'));
  const template = JSON.parse(fs.readFileSync(path.join(ROOT, 'packaging', 'cli', 'package.json'), 'utf8'));
  const manifest = { ...template, version };
  fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  fs.copyFileSync(path.join(ROOT, 'packaging', 'cli', 'README.md'), path.join(stage, 'README.md'));
  fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(stage, 'LICENSE'));
  for (const f of CLI_FILES) {
    fs.mkdirSync(path.join(stage, path.dirname(f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(stage, f));
  }
  fs.chmodSync(path.join(stage, 'bin', 'loopx.js'), 0o755);
  return stage;
}

/**
 * Builds (unless build is false), stages and packs; checks the tarball holds exactly
 * CLI_TARBALL_FILES. Returns its path, size and files.
 * @param {{ out?: string, build?: boolean, log?: (msg: string) => void }} [opts]
 */
export function packageCli(opts = {}) {
  const outDir = path.resolve(ROOT, opts.out ?? '.');
  const log = opts.log ?? (() => {});
  buildDist(opts.build, log);
  const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const stage = stageCli(version);
  try {
    fs.mkdirSync(outDir, { recursive: true });
    log(`packing loopx-cli ${version} ...`);
    const json = run(
      'npm',
      ['pack', '--json', '--offline', '--ignore-scripts', '--pack-destination', outDir],
      'npm pack',
      // Not the enclosing `npm run package`'s settings (its package, its lifecycle): see npm-env.mjs.
      { cwd: stage, env: nestedNpmEnv(process.env) },
    );
    const [info] = JSON.parse(json);
    const files = info.files.map((f) => f.path).sort();
    const file = path.join(outDir, info.filename);
    if (JSON.stringify(files) !== JSON.stringify(CLI_TARBALL_FILES)) {
      fs.rmSync(file, { force: true });
      throw new Error(
        `the CLI tarball would hold ${files.join(', ')}; expected exactly ${CLI_TARBALL_FILES.join(', ')}`,
      );
    }
    return { file, bytes: fs.statSync(file).size, files, version };
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const o = args.indexOf('-o');
  try {
    const res = packageCli({
      out: o >= 0 ? args[o + 1] : undefined,
      build: !args.includes('--no-build'),
      log: (m) => console.error(m),
    });
    const shown = shownPath(res.file);
    console.log(`${shown}: ${(res.bytes / 1024).toFixed(0)} KB, ${res.files.length} files`);
    console.log(`Install the CLI with: npm install -g ${path.isAbsolute(shown) ? '' : './'}${shown}`);
  } catch (err) {
    console.error(`package-cli: ${err.message}`);
    process.exit(1);
  }
}
