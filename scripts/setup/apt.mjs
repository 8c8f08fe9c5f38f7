#!/usr/bin/env node
// The Debian packages that the VS Code host and the tests need, installed with apt when missing.
// Another apt or dpkg at work (unattended-upgrades, a person's `apt install`) holds apt's locks:
// this waits for it, up to LOOPX_APT_LOCK_TIMEOUT seconds (default 600), instead of failing.
//
//   node scripts/setup/apt.mjs host|tests|chromium ...   installs what those sets miss
//
// `npm run setup` uses installDebs() directly; the VS Code host installer, which must stay
// synchronous, runs this file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function onPath(cmd) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, cmd), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
const command = (cmd) => () => onPath(cmd);
const file = (f) => () => fs.existsSync(f);

const CHROMIUM = { deb: 'chromium', present: file('/usr/bin/chromium') };

/** Each set: the Debian package, and how to tell it is there without asking dpkg. */
export const PACKAGES = {
  // code-server's postinstall compiles VS Code's native modules with node-gyp (a C++ compiler,
  // make, python3); its kerberos module needs the gssapi headers.
  host: [
    { deb: 'g++', present: command('g++') },
    { deb: 'make', present: command('make') },
    { deb: 'python3', present: command('python3') },
    { deb: 'libkrb5-dev', present: file('/usr/include/gssapi/gssapi.h') },
  ],
  // Only the tests: npm start prints a URL for the person's own browser.
  tests: [
    CHROMIUM, // the browser, UI, integration and fresh-machine tests drive it
    { deb: 'jq', present: command('jq') }, // the product brief's scripts pipe JSON through it
    { deb: 'bsdutils', present: command('script') }, // `script` gives tests an interactive terminal
    { deb: 'unzip', present: command('unzip') }, // the package tests read the .vsix with it
  ],
  chromium: [CHROMIUM],
};

/** The Debian packages of `sets` that are not installed. */
export function missingDebs(sets) {
  return sets.flatMap((s) => PACKAGES[s].filter((p) => !p.present()).map((p) => p.deb));
}

export function lockTimeoutSeconds() {
  const s = Number(process.env.LOOPX_APT_LOCK_TIMEOUT ?? 600);
  if (!Number.isFinite(s) || s < 0) throw new Error(`LOOPX_APT_LOCK_TIMEOUT=${s} is not a number of seconds`);
  return s;
}

/** apt's words when another process holds one of its locks (LC_ALL=C keeps them in English). */
export const LOCK_HELD = /Could not get lock (\S+?)\.? It is held by process (\d+)(?: \(([^)]*)\))?/;

/** Whether this process is root; apt then runs through sudo, which may ask for a password. */
export const asRoot = () => process.getuid?.() === 0;

/** Runs one apt command (as root); its output goes to `out` as it comes, and is returned. */
function apt(args, out, { root = true } = {}) {
  const [cmd, ...pre] = !root || asRoot() ? [args[0]] : ['sudo', args[0]];
  out.write(`$ ${[cmd, ...pre, ...args.slice(1)].join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [...pre, ...args.slice(1)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' },
    });
    let text = '';
    const take = (d) => {
      text += d;
      out.write(d);
    };
    child.stdout.setEncoding('utf8').on('data', take);
    child.stderr.setEncoding('utf8').on('data', take);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? signal, text }));
  });
}

/** Whether apt's package lists name no version of some of `debs` (a new machine has no lists). */
async function listsLack(debs) {
  const r = await apt(['apt-cache', 'policy', ...debs], { write() {} }, { root: false });
  const known = new Set(
    [...r.text.matchAll(/^(\S+):\n\s+Installed: .*\n\s+Candidate: (.*)$/gm)]
      .filter((m) => m[2] !== '(none)')
      .map((m) => m[1]),
  );
  return debs.some((d) => !known.has(d));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Installs `debs` (none is upgraded), waiting for another apt or dpkg that holds apt's locks.
 * `out` gets all of apt's output; its lock messages are how a caller can tell it waits.
 */
export async function installDebs(debs, out = process.stderr) {
  if (!debs.length) return;
  if (!onPath('apt-get')) {
    throw new Error(`apt-get is not on PATH: install ${debs.join(', ')} yourself, then run this again`);
  }
  if (!asRoot() && !onPath('sudo')) {
    throw new Error(`installing ${debs.join(', ')} needs root: run this as root, or with sudo installed`);
  }
  const timeout = lockTimeoutSeconds();
  const deadline = Date.now() + timeout * 1000;
  let updated = false;
  // `apt-get update` fails at once on a held lock (apt's DPkg::Lock::Timeout covers only dpkg's
  // lock), so it is tried again, with apt's own message each time, until the deadline.
  const update = async () => {
    for (;;) {
      const r = await apt(['apt-get', 'update', '-q'], out);
      if (r.code === 0) break;
      if (!LOCK_HELD.test(r.text) || Date.now() > deadline) {
        throw new Error(`apt-get update exited with ${r.code}`);
      }
      await sleep(2000);
    }
    updated = true;
  };
  const install = () => {
    const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    return apt(
      [
        'apt-get',
        'install',
        '-y',
        '-q',
        '--no-install-recommends',
        '--no-upgrade',
        '-o',
        `DPkg::Lock::Timeout=${left}`,
        ...debs,
      ],
      out,
    );
  };
  // Lists that know every package: no update (seconds of network, and the lists' lock) needed.
  if (await listsLack(debs)) await update();
  let r = await install();
  // Lists older than the mirror name files it no longer has.
  if (r.code !== 0 && !updated && /Failed to fetch|Unable to fetch|Unable to locate package/.test(r.text)) {
    await update();
    r = await install();
  }
  if (r.code !== 0) {
    const held = LOCK_HELD.exec(r.text);
    throw new Error(
      held
        ? `another apt or dpkg (process ${held[2]}${held[3] ? `, ${held[3]}` : ''}) still held ${held[1]} after ${timeout} s (LOOPX_APT_LOCK_TIMEOUT): let it finish, then try again`
        : `apt-get install ${debs.join(' ')} exited with ${r.code}`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sets = process.argv.slice(2);
  const unknown = sets.filter((s) => !(s in PACKAGES));
  if (!sets.length || unknown.length) {
    console.error(`usage: apt.mjs ${Object.keys(PACKAGES).join('|')} ...`);
    process.exit(2);
  }
  installDebs(missingDebs(sets)).catch((err) => {
    console.error(`[apt] ${err.message}`);
    process.exit(1);
  });
}
