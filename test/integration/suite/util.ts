import * as vscode from 'vscode';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { LoopxApi } from '../../../src/extension/extension';

export const EXTENSION_ID = 'loopx.loopx-vscode';

export function workspaceDir(): string {
  const f = vscode.workspace.workspaceFolders?.[0];
  if (!f) throw new Error('the integration tests need a workspace folder');
  return f.uri.fsPath;
}

export async function api(): Promise<LoopxApi> {
  const ext = vscode.extensions.getExtension<LoopxApi>(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not installed in the test host`);
  const exports = ext.isActive ? ext.exports : await ext.activate();
  if (!exports) throw new Error('the extension did not activate (see the LoopX output)');
  return exports;
}

export async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs the built `loopx` CLI in another process, as an agent in a terminal would (in the demo
 * workspace, or in `workspace`: a teammate's clone, say); `input` is its standard input (a hook's
 * JSON, as an agent host passes it).
 */
export function loopxCli(
  args: string[],
  workspace = workspaceDir(),
  env: Record<string, string> = {},
  input?: string,
): { status: number | null; stdout: string; stderr: string } {
  const repo = process.env.LOOPX_REPO ?? path.resolve(__dirname, '..', '..');
  const r = spawnSync(
    process.execPath,
    [path.join(repo, 'bin', 'loopx.js'), '--workspace', workspace, ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', LOOPX_WORKSPACE: '', ...env },
      ...(input === undefined ? {} : { input }),
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Replaces a `vscode.window` method for the duration of `fn` (the extension shares the object). */
export async function withStub<K extends keyof typeof vscode.window, R>(
  name: K,
  impl: (typeof vscode.window)[K],
  fn: () => PromiseLike<R>,
): Promise<R> {
  const w = vscode.window as unknown as Record<string, unknown>;
  const original = w[name as string];
  w[name as string] = impl;
  try {
    return await fn();
  } finally {
    w[name as string] = original;
  }
}

/** Calls a language-model tool as VS Code's agent mode does; returns the text of its result. */
export async function invokeTool(name: string, input: object): Promise<string> {
  const r = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
}
