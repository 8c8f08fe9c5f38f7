/**
 * Helpers for the end-to-end agent tests: the REAL Claude Code and Codex CLIs (pinned, from
 * scripts/hosts/agents/install.mjs), run against a scripted model API on loopback (scripted-messages.ts,
 * scripted-responses.ts) in throwaway homes, with the built `loopx` on their PATH.
 *
 * Everything a test file makes lives under one short private temp folder (also the agents'
 * TMPDIR, so what they leave behind goes with it): call `removeTempDirs` at the end.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, REPO, cleanEnv, shq } from '../cli';

// ---------------------------------------------------------------------------------------------
// The pinned binaries

interface AgentsModule {
  ensureAgents(): { claude: string; codex: string };
}

/** The pinned `claude` and `codex`, installed first if missing (so the agent tests never skip). */
export async function agentBins(): Promise<{ claude: string; codex: string }> {
  const url = pathToFileURL(path.join(REPO, 'scripts', 'hosts', 'agents', 'install.mjs')).href;
  return ((await import(url)) as AgentsModule).ensureAgents();
}

// ---------------------------------------------------------------------------------------------
// Temp folders

let root: string | undefined;

/** A fresh folder under this file's private temp folder (realpath: it compares equal to a cwd). */
export function tempDir(name: string): string {
  // Short: it is the agents' TMPDIR too, and a socket made there may not have a path over 107 bytes.
  root ??= fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lxa-')));
  return fs.mkdtempSync(path.join(root, `${name}-`));
}

export function removeTempDirs(): void {
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = undefined;
}

/** Writes a `loopx` in `dir` that runs the built CLI, so that a bare `loopx` resolves; returns `dir`. */
export function loopxOnPath(dir: string): string {
  fs.writeFileSync(path.join(dir, 'loopx'), `#!/bin/sh\nexec ${shq(process.execPath)} ${shq(BIN)} "$@"\n`, {
    mode: 0o755,
  });
  return dir;
}

// ---------------------------------------------------------------------------------------------
// The scripted model APIs' HTTP side

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: unknown;
  /** Set when the script threw: the CLI got a 400 carrying this message. */
  error?: string;
}

export interface RecordingServer {
  /** The base URL to give the CLI. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export type Reply = { status: number; json: unknown } | { status: number; sse: [string, unknown][] };

/**
 * An HTTP server on 127.0.0.1 that records every request and answers it with `handle`'s reply
 * (a 404 when `handle` has none). A `handle` that throws (a script that went wrong) answers 400,
 * which neither CLI retries, so the test fails at once with the script's message.
 */
export function startRecordingServer(
  handle: (req: { method: string; path: string; body: unknown }) => Reply | undefined,
): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: recorded as text.
      }
      const url = req.url ?? '/';
      const record: RecordedRequest = { method: req.method ?? '', url, headers: req.headers, body };
      requests.push(record);
      let reply: Reply | undefined;
      try {
        reply = handle({ method: record.method, path: url.split('?')[0]!, body });
      } catch (err) {
        record.error = (err as Error).stack ?? String(err);
        reply = {
          status: 400,
          json: { type: 'error', error: { type: 'invalid_request_error', message: record.error } },
        };
      }
      if (!reply)
        reply = { status: 404, json: { type: 'error', error: { type: 'not_found_error', message: url } } };
      if ('sse' in reply) {
        res.writeHead(reply.status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const [event, data] of reply.sse)
          res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        res.end();
      } else {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.json));
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        requests,
        close: () =>
          new Promise<void>((done) => {
            // The CLIs keep their connections alive; without this, close waits for them.
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Running the agents

export interface AgentResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document (Claude Code's `--output-format json` result), if it is one. */
  json: Record<string, unknown> | undefined;
}

/** An agent CLI's run as an assertion message shows it: exit code, stdout, stderr. */
export const show = (r: AgentResult) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

interface AgentRun {
  cwd: string;
  home: string;
  baseUrl: string;
  prompt: string;
  /** Added to the environment; LOOPX_CONFIG_DIR here wins over the test run's own. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

let shimDir: string | undefined;

/**
 * The clean test environment (no LOOPX_* but LOOPX_CONFIG_DIR), without any setting or credential
 * of a real agent: a developer's ANTHROPIC_API_KEY must not reach the tests, and CLAUDECODE (set
 * when the tests run inside Claude Code) would tell the CLI it is nested.
 */
function agentEnv(home: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = cleanEnv();
  for (const k of Object.keys(env)) if (/^(ANTHROPIC_|CLAUDE|CODEX_|OPENAI_)/.test(k)) delete env[k];
  shimDir ??= loopxOnPath(tempDir('bin'));
  return {
    ...env,
    HOME: home,
    TMPDIR: root,
    PATH: `${shimDir}${path.delimiter}${env.PATH ?? ''}`,
    ...extra,
  };
}

function spawnAgent(
  what: string,
  file: string,
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<AgentResult> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    // Its own process group, so that the tools and MCP servers it started die with it. stdin is
    // /dev/null: both CLIs would otherwise wait for a prompt on a piped stdin.
    const child = spawn(file, args, {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.on('error', reject);
    // A leftover background process would hold stdout open, and 'close' would wait for it.
    child.on('exit', killGroup);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new Error(
            `${what} timed out after ${timeoutMs / 1000}s and was killed\n--- stdout\n${stdout}\n--- stderr\n${stderr}`,
          ),
        );
        return;
      }
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr, json });
    });
  });
}

/**
 * `claude -p <prompt> --output-format json [args]` in `cwd`, with the Messages API at `baseUrl`.
 * `args` go before the prompt's `--`, so a list option (`--allowedTools A B`) cannot swallow it.
 * `argv` runs another claude command instead (`mcp add ...`), with the same environment.
 */
export async function runClaude(o: AgentRun & { args?: string[]; argv?: string[] }): Promise<AgentResult> {
  const { claude } = await agentBins();
  const env = agentEnv(o.home, {
    ANTHROPIC_BASE_URL: o.baseUrl,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...o.env,
  });
  const args = o.argv ?? ['-p', '--output-format', 'json', ...(o.args ?? []), '--', o.prompt];
  return spawnAgent('claude', claude, args, { cwd: o.cwd, env, timeoutMs: o.timeoutMs });
}

/** Where Claude Code keeps the transcript of a session run in `cwd` (its `session_id`). */
export function claudeTranscript(home: string, cwd: string, sessionId: string): string {
  return path.join(home, '.claude', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
}

export interface McpServer {
  /** The server's name: its tools are in the namespace `mcp__<name>`. */
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** A TOML basic string: JSON's escapes are TOML's. */
const toml = (s: string) => JSON.stringify(s);

/**
 * Codex's config.toml for the scripted Responses API at `baseUrl` (the key in SCRIPTED_API_KEY):
 * never asking (approval_policy), writing only in the workspace.
 */
export function codexConfigLines(baseUrl: string): string[] {
  return [
    'model = "test-model"',
    'model_provider = "scripted"',
    'approval_policy = "never"',
    'sandbox_mode = "workspace-write"',
    // Commands run in a login shell by default, and /etc/profile resets PATH: the `loopx` shim
    // (and whatever else the test put first on PATH) would not be found.
    'allow_login_shell = false',
    '[model_providers.scripted]',
    'name = "scripted"',
    `base_url = ${toml(baseUrl)}`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_API_KEY"',
  ];
}

/**
 * `codex exec <prompt>` in `cwd`, with `codexHome/config.toml` pointing Codex at the Responses
 * API at `baseUrl`, never asking (approval_policy), writing only in the workspace, and with `mcp`
 * as its one MCP server.
 */
export async function runCodex(o: AgentRun & { codexHome: string; mcp?: McpServer }): Promise<AgentResult> {
  const { codex } = await agentBins();
  const env = agentEnv(o.home, { CODEX_HOME: o.codexHome, SCRIPTED_API_KEY: 'x', ...o.env });
  const lines = codexConfigLines(o.baseUrl);
  if (o.mcp) {
    if (!/^[A-Za-z0-9_-]+$/.test(o.mcp.name))
      throw new Error(`MCP server name ${o.mcp.name} is not a TOML key`);
    // Codex starts an MCP server with a few variables only (HOME, PATH, LANG, ...), so the test
    // run's config folder is handed over explicitly: the server must not write into the real one.
    const mcpEnv = {
      ...(env.LOOPX_CONFIG_DIR ? { LOOPX_CONFIG_DIR: env.LOOPX_CONFIG_DIR } : {}),
      ...o.mcp.env,
    };
    lines.push(
      `[mcp_servers.${o.mcp.name}]`,
      `command = ${toml(o.mcp.command)}`,
      `args = [${o.mcp.args.map(toml).join(', ')}]`,
      // Tool calls run without asking: `codex exec` has nobody to ask.
      'default_tools_approval_mode = "approve"',
      `[mcp_servers.${o.mcp.name}.env]`,
      ...Object.entries(mcpEnv).map(([k, v]) => `${toml(k)} = ${toml(v)}`),
    );
  }
  fs.mkdirSync(o.codexHome, { recursive: true });
  fs.writeFileSync(path.join(o.codexHome, 'config.toml'), `${lines.join('\n')}\n`);
  const args = ['exec', '--skip-git-repo-check', '--', o.prompt];
  return spawnAgent('codex', codex, args, { cwd: o.cwd, env, timeoutMs: o.timeoutMs });
}
