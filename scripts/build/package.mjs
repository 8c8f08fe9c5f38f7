#!/usr/bin/env node
// `npm run package`: builds dist/ and packs the extension into a .vsix with @vscode/vsce, after
// checking that the package holds exactly what runs (the list below) and nothing else.
//
//   node scripts/build/package.mjs [-o loopx.vsix] [--no-build]
//
// The .vsix installs in a desktop VS Code (`code --install-extension loopx.vsix`) and in
// code-server (`npm start` and test/ui use it that way). Also importable:
//   const { packageVsix } = await import('./package.mjs'); await packageVsix({ out });
// Run as a script it also packs the standalone CLI tarball next to the .vsix (package-cli.mjs).
// vsce must print no warning (the Marketplace and Open VSX show what it warns about): one fails
// the package.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageCli } from './package-cli.mjs';
import { ROOT, buildDist, run, shownPath } from './packaging-steps.mjs';
import { LOCK_PLATFORMS } from './lock-platforms.mjs';

export { ROOT };

/** Files the extension needs at run time; `media/**` is matched as a folder. */
export const REQUIRED = [
  'package.json',
  'README.md',
  'CHANGELOG.md',
  'dist/extension.js',
  'dist/cli.js',
  'dist/mcp.js',
  'dist/webauthn.js',
  'dist/webview.js',
  'dist/decide.js',
  ...LOCK_PLATFORMS.map((p) => `dist/prebuilds/${p}/fs-native-extensions.node`),
  'bin/loopx',
  'bin/loopx.js',
  'media/loopx.svg',
  'media/icon.png',
  'media/dashboard.css',
  'media/browser-theme.css',
];
const OPTIONAL = ['LICENSE', 'LICENSE.md', 'LICENSE.txt'];
const allowed = (f) => REQUIRED.includes(f) || OPTIONAL.includes(f) || f.startsWith('media/');

function vsceCommand() {
  const local = path.join(ROOT, 'node_modules', '.bin', 'vsce');
  return fs.existsSync(local) ? [local] : ['npx', '--no-install', 'vsce'];
}

/** The files `vsce` would pack, checked against REQUIRED and the allowed extras. */
export function packageFiles() {
  const [cmd, ...pre] = vsceCommand();
  const out = run(cmd, [...pre, 'ls', '--no-dependencies'], 'vsce ls');
  const files = out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
  const missing = REQUIRED.filter((f) => !files.includes(f));
  const extra = files.filter((f) => !allowed(f));
  if (missing.length || extra.length) {
    throw new Error(
      `the .vsix would not hold exactly what runs (see .vscodeignore; run \`npm run build\` first?)` +
        (missing.length ? `\n  missing: ${missing.join(', ')}` : '') +
        (extra.length ? `\n  not needed: ${extra.join(', ')}` : ''),
    );
  }
  return files;
}

/**
 * Builds (unless build is false), checks the file list, packs. Returns the .vsix path, its size
 * and the packed files.
 * @param {{ out?: string, build?: boolean, log?: (msg: string) => void }} [opts]
 */
export function packageVsix(opts = {}) {
  const out = path.resolve(ROOT, opts.out ?? 'loopx.vsix');
  const log = opts.log ?? (() => {});
  buildDist(opts.build, log);
  const files = packageFiles();
  const [cmd, ...pre] = vsceCommand();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  log(`packing ${files.length} files ...`);
  // README links and images into the repository (docs/) become absolute URLs under `repository`.
  const output = run(
    cmd,
    [...pre, 'package', '--no-dependencies', '-o', out], // dist/ is bundled: no node_modules at run time
    'vsce package',
    { both: true },
  );
  const warnings = output.split('\n').filter((l) => /WARNING/.test(l));
  if (warnings.length) {
    fs.rmSync(out, { force: true });
    throw new Error(`vsce package warned (fix the manifest or README):\n${warnings.join('\n')}`);
  }
  return { file: out, bytes: fs.statSync(out).size, files, output };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const o = args.indexOf('-o');
  try {
    const res = packageVsix({
      out: o >= 0 ? args[o + 1] : undefined,
      build: !args.includes('--no-build'),
      log: (m) => console.error(m),
    });
    console.log(res.files.map((f) => `  ${f}`).join('\n'));
    const shown = shownPath(res.file);
    console.log(`${shown}: ${(res.bytes / 1024).toFixed(0)} KB, ${res.files.length} files`);
    console.log(`Install it in VS Code with: code --install-extension ${shown}`);
    const cli = packageCli({ out: path.dirname(res.file), build: false, log: (m) => console.error(m) });
    const cliShown = shownPath(cli.file);
    console.log(`${cliShown}: ${(cli.bytes / 1024).toFixed(0)} KB, ${cli.files.length} files`);
    console.log(
      `Install the CLI alone with: npm install -g ${path.isAbsolute(cliShown) ? '' : './'}${cliShown}`,
    );
  } catch (err) {
    console.error(`package: ${err.message}`);
    process.exit(1);
  }
}
