/**
 * What the README doc test needs: the README's runnable shell blocks, a clean user environment,
 * and a pseudo-terminal in which a person answers the passphrase prompts.
 *
 * A block is runnable when its fence says so: ```bash runnable=<name>. The name says what the
 * test does with it (`install-shim`, `install-tarball`, `example`, `agent-loop`).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '..', '..');
export const README = path.join(REPO, 'README.md');

export interface Block {
  name: string;
  code: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
}

/** Every runnable block of a Markdown text, in order. */
export function runnableBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // A block in a list item is indented: the indent of its fence is taken off every line.
    const open = /^( *)```(?:bash|sh)\s+runnable=([\w-]+)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^ *```\s*$/.test(lines[j]!); j++)
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!);
    if (j === lines.length) throw new Error(`README.md:${i + 1}: the runnable block is never closed`);
    blocks.push({ name: open[2]!, code: body.join('\n') + '\n', line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The one block of that name; a test fails clearly when the README lost or doubled it. */
export function block(blocks: Block[], name: string): Block {
  const found = blocks.filter((b) => b.name === name);
  if (found.length !== 1)
    throw new Error(`README.md has ${found.length} blocks marked runnable=${name}; expected exactly one`);
  return found[0]!;
}

/**
 * A new user's environment: their own HOME, a PATH of the system's folders and `bin` first,
 * nothing of LoopX's or npm's from the test run (npm run sets npm_* variables, and
 * scripts/test.mjs a LOOPX_CONFIG_DIR: the README's commands must work with the defaults).
 */
export function userEnv(
  home: string,
  binFirst: string[],
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'USER', 'LOGNAME', 'SHELL'])
    if (process.env[k] !== undefined) env[k] = process.env[k];
  return {
    ...env,
    HOME: home,
    PATH: [...binFirst, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    ...extra,
  };
}

export interface TerminalRun {
  code: number;
  /** What the terminal showed (stdout and stderr merged, CRs removed). */
  output: string;
  /** How many prompts the person answered. */
  answered: number;
}

/**
 * Runs a bash script in a pseudo-terminal (util-linux `script`), as a person who pastes it into
 * their shell: `set -euo pipefail` so that any failed step fails the run. Whenever the terminal
 * shows a passphrase prompt, the person types `passphrase`.
 */
export function runInTerminal(
  script: string,
  o: { cwd: string; env: NodeJS.ProcessEnv; passphrase: string; timeoutMs?: number },
): Promise<TerminalRun> {
  const file = path.join(o.cwd, '.readme-block.sh');
  fs.writeFileSync(file, `set -euo pipefail\n${script}`);
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `bash ${file}`, '/dev/null'], {
      cwd: o.cwd,
      env: o.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own session, so the only terminal the commands see is the one `script` makes.
      detached: true,
    });
    let output = '';
    let answeredUpTo = 0;
    let answered = 0;
    const onData = (c: string) => {
      output += c.replace(/\r/g, '');
      const fresh = output.slice(answeredUpTo);
      if (/(passphrase[^\n]*|Again): *$/i.test(fresh)) {
        answeredUpTo = output.length;
        answered++;
        child.stdin.write(`${o.passphrase}\n`);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(file, { force: true });
      resolve({ code: code ?? (signal ? -1 : -2), output, answered });
    });
  });
}

/** Runs a bash script with no terminal, as a setup step or an agent's shell does. */
export function runScript(
  script: string,
  o: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 300_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr });
    });
  });
}
