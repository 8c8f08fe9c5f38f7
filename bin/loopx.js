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

// The cache is code that runs as whoever calls `loopx`: it lives in the user's own cache folder
// (XDG_CACHE_HOME, else ~/.cache), and is used only when the folder and the file belong to this
// user and nobody else can write them (lstat / O_NOFOLLOW: no link is followed). V8 checks a
// cache against the source's length, not its text, so a planted cache would run as ours.
const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
const xdgCache = process.env.XDG_CACHE_HOME;
const cacheDir = path.join(
  xdgCache && path.isAbsolute(xdgCache) ? xdgCache : path.join(os.homedir(), '.cache'),
  'loopx',
);
const cacheFile = path.join(
  cacheDir,
  `cli-${stat.size}-${Math.floor(stat.mtimeMs)}-${process.version}-${process.arch}.bin`,
);
/** The names cacheFile takes, whichever build and Node wrote them (pruneCaches). */
const CACHE_NAME = /^cli-.*\.bin$/;
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
const O_NOFOLLOW = fs.constants.O_NOFOLLOW || 0;
const ours = (st) => st.uid === uid && (st.mode & 0o022) === 0;
/** 'ok': our private folder; 'missing': none yet (made on exit); 'unsafe': never read nor written. */
function cacheDirState() {
  if (uid === undefined) return 'unsafe';
  try {
    const st = fs.lstatSync(cacheDir);
    return st.isDirectory() && ours(st) ? 'ok' : 'unsafe';
  } catch (e) {
    return e && e.code === 'ENOENT' ? 'missing' : 'unsafe';
  }
}
const dirState = cacheDirState();
let cachedData;
if (dirState === 'ok') {
  let fd;
  try {
    fd = fs.openSync(cacheFile, O_RDONLY | O_NOFOLLOW);
    const st = fs.fstatSync(fd);
    if (st.isFile() && ours(st)) cachedData = fs.readFileSync(fd);
  } catch {
    cachedData = undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

const script = new vm.Script(Module.wrap(source), {
  filename: file,
  cachedData,
  importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
if (dirState !== 'unsafe' && (!cachedData || script.cachedDataRejected)) {
  // Written after the command ran, so the functions it compiled lazily are in the cache too.
  process.once('exit', () => {
    try {
      fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
      if (cacheDirState() !== 'ok') return;
      const tmp = `${cacheFile}.${process.pid}`;
      const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      try {
        fs.writeFileSync(fd, script.createCachedData());
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, cacheFile);
    } catch {
      /* no cache this time: the next run compiles again */
      return;
    }
    pruneCaches();
  });
}

// Each build and each Node version names a cache of its own, about a megabyte; without pruning the
// folder keeps one per upgrade for ever. The newest few stay, so two installs used in turn (the
// editor's CLI and a global one) keep theirs. Only when a cache was written: never on a warm call.
const CACHES_KEPT = 4;
function pruneCaches() {
  try {
    const caches = [];
    for (const name of fs.readdirSync(cacheDir)) {
      if (!CACHE_NAME.test(name)) continue;
      const st = fs.lstatSync(path.join(cacheDir, name));
      if (st.isFile() && st.uid === uid) caches.push({ name, mtimeMs: st.mtimeMs });
    }
    caches.sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const { name } of caches.slice(CACHES_KEPT)) fs.rmSync(path.join(cacheDir, name), { force: true });
  } catch {
    /* pruning is housekeeping: a failure leaves old caches for the next write */
  }
}
const cliModule = { exports: {}, filename: file, id: file, loaded: false };
script.runInThisContext()(cliModule.exports, Module.createRequire(file), cliModule, file, path.dirname(file));
