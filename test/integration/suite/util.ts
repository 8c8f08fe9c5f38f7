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

/** A progress notification the extension raised: its text, and whether it has ended (closed). */
export interface ShownNotification {
  title: string;
  ended: boolean;
}

/**
 * Runs `fn` with `window.withProgress` recording notifications (the gate notifications are
 * progress notifications, closed when their task ends); others still run their task.
 */
export async function withNotifications<R>(fn: (shown: ShownNotification[]) => PromiseLike<R>): Promise<R> {
  const shown: ShownNotification[] = [];
  const original = vscode.window.withProgress;
  return withStub(
    'withProgress',
    ((opts: vscode.ProgressOptions, task: Parameters<typeof vscode.window.withProgress>[1]) => {
      if (opts.location !== vscode.ProgressLocation.Notification) return original(opts, task);
      const n: ShownNotification = { title: opts.title ?? '', ended: false };
      shown.push(n);
      const token = new vscode.CancellationTokenSource().token;
      return Promise.resolve(task({ report: () => undefined }, token)).finally(() => (n.ended = true));
    }) as typeof vscode.window.withProgress,
    () => fn(shown),
  );
}

/** VS Code's pattern for a link in a notification message (vs/base/common/linkedText.ts). */
const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

/** The links of a notification's text, as VS Code renders them: label and target. */
export function notificationLinks(text: string): { label: string; href: string }[] {
  return [...text.matchAll(NOTIFICATION_LINK)].map((m) => ({ label: m[1]!, href: m[2]! }));
}

/** Clicks the link labelled `label` of a notification: runs its `command:` URI as VS Code does. */
export async function clickNotificationLink(text: string, label: string): Promise<unknown> {
  const link = notificationLinks(text).find((l) => l.label === label);
  if (!link) throw new Error(`no link "${label}" in: ${text}`);
  const uri = vscode.Uri.parse(link.href);
  const args = uri.query ? (JSON.parse(decodeURIComponent(uri.query)) as unknown) : [];
  return vscode.commands.executeCommand(uri.path, ...(Array.isArray(args) ? args : [args]));
}

/** Markdown source written by `markdownLiteral`, read back as the text it shows. */
export const shownText = (md: string): string =>
  md.replace(/&nbsp;/g, ' ').replace(/\\([!-/:-@[-`{-~])/g, '$1');
