// Builds the bundles: the `loopx` CLI, the extension, and (when present) the dashboard webview.
// Usage: node scripts/build/build.mjs [--watch] [--dev]
import * as esbuild from 'esbuild';
import { copyFileSync, existsSync, readFileSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { LOCK_PLATFORMS } from './lock-platforms.mjs';

const watch = process.argv.includes('--watch');
const dev = process.argv.includes('--dev') || watch;
const nodeRequire = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

const common = {
  bundle: true,
  minify: !dev,
  sourcemap: dev ? 'inline' : false,
  logLevel: 'info',
  legalComments: 'none',
  define: { LOOPX_VERSION: JSON.stringify(pkg.version) },
};

// The MCP server (and its SDK) is a bundle of its own, loaded only by `loopx mcp` and the
// extension's MCP provider: every other CLI call starts without parsing it.
const mcpExternal = {
  name: 'mcp-external',
  setup(build) {
    build.onResolve({ filter: /[\\/]server[\\/]mcp$/ }, () => ({ path: './mcp.js', external: true }));
  },
};
// The WebAuthn library (src/server/webauthn.ts) is a bundle of its own too, loaded when the status
// server starts: it would otherwise double dist/cli.js, which every `loopx` call loads.
const webauthnExternal = {
  name: 'webauthn-external',
  setup(build) {
    build.onResolve({ filter: /^\.\/webauthn$/ }, (args) =>
      /[\\/]src[\\/]server[\\/][^\\/]+$/.test(args.importer)
        ? { path: './webauthn.js', external: true }
        : undefined,
    );
  },
};
// zod's classic API re-exports every locale (about 260 KB minified); we speak English only.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales-en', namespace: 'zod-locales' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: "export { default as en } from 'zod/v4/locales/en.js';",
      resolveDir: process.cwd(),
      loader: 'js',
    }));
  },
};
// Node's modules that start processes or speak HTTP load many more with them (net, stream, dgram,
// tls): commander and a few of our modules require child_process when they load, the notices'
// sender http and https. Only exec, doctor, the terminal prompts, the servers and the notices use
// them, so in the CLI each is loaded on its first use (test/cli/startup-load.test.ts): a module of
// getters standing in for it.
const LAZY_BUILTINS = ['child_process', 'http', 'https', 'net'];
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    const names = new RegExp(`^(node:)?(${LAZY_BUILTINS.join('|')})$`);
    build.onResolve({ filter: names }, (args) => {
      const name = names.exec(args.path)[2];
      return args.namespace === 'lazy-builtin'
        ? { path: `node:${name}`, external: true }
        : { path: name, namespace: 'lazy-builtin' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: [
        `let loaded;\nconst load = () => (loaded ??= require('node:${args.path}'));`,
        ...Object.keys(nodeRequire(`node:${args.path}`)).map(
          (n) =>
            `Object.defineProperty(exports, ${JSON.stringify(n)}, { enumerable: true, get: () => load()[${JSON.stringify(n)}] });`,
        ),
      ].join('\n'),
      loader: 'js',
    }));
  },
};
// `import * as fs from 'node:fs'` becomes, in a bundle, a copy of every export of the module made
// by each file that imports it (esbuild's __toESM): about 120 copies of fs and path a call. Our
// sources are bundled with such an import read as `const fs = require('node:fs')`, one object
// shared by all (and, for the lazy modules above, their stand-in).
const builtinNamespaces = {
  name: 'builtin-namespaces',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(
        /^import \* as (\w+) from '(node:[\w/]+)';$/gm,
        "const $1 = require('$2');",
      ),
      loader: 'ts',
    }));
  },
};
// The kernel lock (store/lock.ts) is fs-native-extensions, a prebuilt Node-API binding: its
// JavaScript is bundled, and its binding is loaded from dist/prebuilds/<platform>-<arch>/, copied
// there below for the platforms VS Code runs on (Node-API: one binary serves Node.js and Electron).
const lockBinding = {
  name: 'lock-binding',
  setup(build) {
    build.onResolve({ filter: /^\.\/binding$/ }, (args) =>
      /[\\/]fs-native-extensions[\\/]/.test(args.importer)
        ? { path: 'fs-native-extensions-binding', namespace: 'lock-binding' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lock-binding' }, () => ({
      contents:
        "module.exports = require(require('node:path').join(__dirname, 'prebuilds', process.platform + '-' + process.arch, 'fs-native-extensions.node'));",
      loader: 'js',
    }));
  },
};
function copyLockBindings() {
  const from = 'node_modules/fs-native-extensions/prebuilds';
  for (const p of LOCK_PLATFORMS) {
    mkdirSync(`dist/prebuilds/${p}`, { recursive: true });
    copyFileSync(`${from}/${p}/fs-native-extensions.node`, `dist/prebuilds/${p}/fs-native-extensions.node`);
  }
}
common.plugins = [zodEnglishOnly, lockBinding];

// `import('./mcp.js')` stays a require(): bin/loopx.js runs the CLI from V8's code cache through
// vm.Script, where a real dynamic import has no loader.
common.supported = { 'dynamic-import': false };

const builds = [
  {
    ...common,
    entryPoints: ['src/cli/index.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [mcpExternal, webauthnExternal, zodEnglishOnly, lockBinding, lazyBuiltins, builtinNamespaces],
  },
  {
    ...common,
    entryPoints: ['src/server/webauthn.ts'],
    outfile: 'dist/webauthn.js',
    // Named, so packaging can tell the built file from an empty or foreign one (it looks for "loopx").
    banner: { js: '/* loopx: @simplewebauthn/server for the status server */' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    ...common,
    entryPoints: ['src/server/mcp.ts'],
    outfile: 'dist/mcp.js',
    plugins: [...common.plugins, builtinNamespaces],
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
];
if (existsSync('src/extension/extension.ts')) {
  builds.push({
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    plugins: [mcpExternal, webauthnExternal, zodEnglishOnly, lockBinding, builtinNamespaces],
  });
}
if (existsSync('webview/main.ts')) {
  builds.push({
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  });
}

// The decision and passkey pages of the status server (src/server/decide-page.ts), with the
// WebAuthn browser library bundled in: served from the fixed asset list (src/server/assets.ts).
if (existsSync('webview/decide/main.ts')) {
  builds.push({
    ...common,
    entryPoints: ['webview/decide/main.ts'],
    outfile: 'dist/decide.js',
    banner: { js: '/* loopx: the decision pages */' },
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  });
}

mkdirSync('dist', { recursive: true });
copyLockBindings();
if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
