/**
 * What the doc tests need: the runnable shell blocks of README.md and of every Markdown page
 * under docs/, the links between those pages, a clean user environment, and a pseudo-terminal
 * in which a person answers the passphrase prompts.
 *
 * A block is runnable when its fence says so: ```bash runnable=<name>. The name says what the
 * test does with it (`install-shim`, `install-tarball`, `example`, `agent-loop`). A plain
 * ```bash block is illustrative: it is never run.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '..', '..');
export const README = path.join(REPO, 'README.md');
export const DOCS = path.join(REPO, 'docs');

export interface Block {
  name: string;
  code: string;
  /** The page it is on, relative to the repository (README.md, docs/....md). */
  file: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
}

/** README.md and every Markdown page under docs/, relative to the repository, README first. */
export function docPages(): string[] {
  const pages: string[] = [];
  (function walk(dir: string) {
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) pages.push(path.relative(REPO, p));
    }
  })(DOCS);
  return ['README.md', ...pages];
}

/** Every runnable block of a Markdown text, in order. */
export function runnableBlocks(markdown: string, file = 'README.md'): Block[] {
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
    if (j === lines.length) throw new Error(`${file}:${i + 1}: the runnable block is never closed`);
    blocks.push({ name: open[2]!, code: body.join('\n') + '\n', file, line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The runnable blocks of README.md and of every page under docs/, wherever they live. */
export function allRunnableBlocks(): Block[] {
  return docPages().flatMap((f) => runnableBlocks(fs.readFileSync(path.join(REPO, f), 'utf8'), f));
}

/** The one block of that name; a test fails clearly when the docs lost or doubled it. */
export function block(blocks: Block[], name: string): Block {
  const found = blocks.filter((b) => b.name === name);
  if (found.length !== 1)
    throw new Error(
      `the docs have ${found.length} blocks marked runnable=${name}` +
        (found.length ? ` (${found.map((b) => `${b.file}:${b.line}`).join(', ')})` : '') +
        '; expected exactly one',
    );
  return found[0]!;
}

/** A Markdown text without its fenced code blocks (their lines blanked, so line numbers hold). */
function withoutFences(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((l) => {
    const m = /^ *(`{3,}|~{3,})/.exec(l);
    if (fence === null && m) {
      fence = m[1]!;
      return '';
    }
    if (fence !== null) {
      if (m && m[1]!.startsWith(fence[0]!) && m[1]!.length >= fence.length && l.trim() === m[1]) fence = null;
      return '';
    }
    return l;
  });
}

export interface Link {
  /** The link as written: a path, maybe with a #fragment. */
  target: string;
  line: number;
}

/** Every inline link and image of a Markdown text, outside code blocks and code spans. */
export function links(markdown: string): Link[] {
  const out: Link[] = [];
  withoutFences(markdown).forEach((l, i) => {
    const text = l.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (m) => ' '.repeat(m.length));
    for (const m of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

/** Whether a link leaves the repository (a URL, a mail address, an editor command). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/** The anchors GitHub gives the headings of a Markdown text (its slug rule, with -1, -2 for repeats). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const l of withoutFences(markdown)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    if (!h) continue;
    const base = h[1]!
      .replace(/`/g, '')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/**
 * A new user's environment: their own HOME, a PATH of the system's folders and `bin` first,
 * nothing of LoopX's or npm's from the test run (npm run sets npm_* variables, and
 * scripts/test/run-suite.mjs a LOOPX_CONFIG_DIR: the README's commands must work with the defaults).
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
