#!/usr/bin/env node
'use strict';
// The `loopx` command: the bundled CLI in dist/ (built by `npm run build`).
//
// Startup matters (every agent turn calls loopx a few times), and compiling the bundle is a
// large share of it. So the compiled code is cached (V8 code cache) per user, keyed by the
// bundle's size and mtime and the Node version; a stale or rejected cache is simply rebuilt.
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const vm = require('node:vm');
const Module = require('node:module');

const file = path.join(__dirname, '..', 'dist', 'cli.js');
let source;
let stat;
try {
  source = fs.readFileSync(file, 'utf8');
  stat = fs.statSync(file);
} catch {
  process.stderr.write(
    `loopx: the CLI is not built yet: run \`npm run build\` in ${path.dirname(__dirname)}\n`,
  );
  process.exit(1);
}
if (!source.includes('loopx')) {
  process.stderr.write(
    `loopx: ${file} is empty or incomplete (a build in progress?): run \`npm run build\`\n`,
  );
  process.exit(1);
}

const uid = typeof process.getuid === 'function' ? process.getuid() : 'u';
const cacheDir = path.join(os.tmpdir(), `loopx-code-cache-${uid}`);
const cacheFile = path.join(
  cacheDir,
  `cli-${stat.size}-${Math.floor(stat.mtimeMs)}-${process.version}-${process.arch}.bin`,
);
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}

const script = new vm.Script(Module.wrap(source), {
  filename: file,
  cachedData,
  importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
if (!cachedData || script.cachedDataRejected) {
  // Written after the command ran, so the functions it compiled lazily are in the cache too.
  process.once('exit', () => {
    try {
      fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
      const tmp = `${cacheFile}.${process.pid}`;
      fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(tmp, cacheFile);
    } catch {
      /* no cache this time: the next run compiles again */
    }
  });
}
const cliModule = { exports: {}, filename: file, id: file, loaded: false };
script.runInThisContext()(cliModule.exports, Module.createRequire(file), cliModule, file, path.dirname(file));
