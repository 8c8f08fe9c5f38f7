/**
 * In the real host: "Run Workflow..." on a goal (a built-in and a team's own workflow file), and
 * "Open Dashboard in Browser" with its one-time login link, and the `vscode://` links the browser
 * page shows leading back to the editor's own commands.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, until, withStub, workspaceDir } from './util';
import { Store } from '../../../src/core/index';
import { shellWords } from '../../../src/core/shell/lexer';
import { vscodeLinkFor } from '../../../src/core/views/dashboard-links';

type Modal = { message: string; detail: string };

/** Runs `fn` with every modal answered by `answer` (the button, or undefined for Cancel); returns what it showed. */
async function withModals<R>(answer: (action: string) => string | undefined, fn: () => Thenable<R>) {
  const shown: Modal[] = [];
  const stub = (async (message: string, o: vscode.MessageOptions, ...items: string[]) => {
    if (!o?.modal) return undefined;
    shown.push({ message, detail: o.detail ?? '' });
    return answer(items[0]!);
  }) as unknown as typeof vscode.window.showWarningMessage;
  const result = await withStub('showWarningMessage', stub, fn);
  return { result, shown };
}

/** Replaces a `vscode.env` function for the duration of `fn`. */
async function withEnvStub<R>(
  name: 'openExternal',
  impl: typeof vscode.env.openExternal,
  fn: () => Thenable<R>,
) {
  const env = vscode.env as unknown as Record<string, unknown>;
  const original = env[name];
  env[name] = impl;
  try {
    return await fn();
  } finally {
    env[name] = original;
  }
}

function get(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      http
        .get(url, { headers }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        })
        .on('error', reject);
    },
  );
}

async function newGoal(title: string): Promise<string> {
  const goalId = await vscode.commands.executeCommand<string>('loopx.createGoal', {
    title,
    objective: 'a workflow runs on it',
  });
  assert.ok(goalId, 'the goal was created');
  return goalId;
}

export function registerWorkflowAndBrowserTests(): void {
  describe('Run Workflow... in the real host', function () {
    it('runs the built-in issue-fix on a goal: picked and typed, shown whole in a modal, added as the person', async () => {
      await api();
      const goalId = await newGoal('Fix issue 42');
      const store = new Store(workspaceDir());
      let offered: string[] = [];
      const pick = (async (items: readonly (vscode.QuickPickItem & { w?: { name: string } })[]) => {
        offered = items.map((i) => i.w?.name ?? '');
        return items.find((i) => i.w?.name === 'issue-fix');
      }) as unknown as typeof vscode.window.showQuickPick;
      const typed = (async (o?: vscode.InputBoxOptions) => {
        assert.match(o?.prompt ?? '', /issue/);
        assert.equal(o?.validateInput?.('12; rm -rf ~') ? 'refused' : 'accepted', 'refused');
        return '42';
      }) as typeof vscode.window.showInputBox;
      const { result, shown } = await withModals(
        (action) => action,
        () =>
          withStub('showQuickPick', pick, () =>
            withStub('showInputBox', typed, () =>
              vscode.commands.executeCommand<string>('loopx.runWorkflow', { goalId }),
            ),
          ),
      );
      assert.equal(result, goalId);
      assert.ok(
        offered.includes('issue-fix') && offered.includes('release'),
        `offered ${offered.join(', ')}`,
      );
      assert.equal(shown.length, 1, 'one modal with the facts');
      const state = store.load(goalId).state;
      const fromWorkflow = state.todos.filter((t) => state.workflows?.[0]?.todoIds.includes(t.id));
      assert.ok(fromWorkflow.length >= 4, `the workflow added ${fromWorkflow.length} todos`);
      for (const t of fromWorkflow) {
        assert.equal(t.addedBy?.kind, 'user');
        assert.equal(t.addedBy?.channel, 'vscode');
        if (t.action) assert.ok(shown[0]!.detail.includes(t.action), `the modal shows ${t.action} whole`);
      }
      assert.ok(fromWorkflow.some((t) => t.action && shellWords(t.action)?.includes('42')));
      assert.equal(state.workflows?.[0]?.name, 'issue-fix');
      assert.ok(
        state.gates.some((g) => state.workflows![0]!.gateIds.includes(g.id) && g.status === 'pending'),
      );
    });

    it("runs a team's own workflow file with a hostile parameter kept as one word; Cancel adds nothing", async () => {
      const ws = workspaceDir();
      const goalId = await newGoal('Team workflow');
      const file = path.join(ws, '.loopx', 'capabilities', 'notify.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(
        file,
        JSON.stringify({
          name: 'notify',
          title: 'Notify the team',
          summary: 'Posts a note.',
          params: { text: { description: 'what to say' } },
          todos: [{ key: 'post', title: 'Post {text}', action: 'echo {text}' }],
          quota: { turns: 1 },
        }),
      );
      const store = new Store(ws);
      const before = store.load(goalId).state.todos.length;
      const hostile = '$(touch pwned)`id`';
      const cancelled = await withModals(
        () => undefined,
        () =>
          vscode.commands.executeCommand('loopx.runWorkflow', {
            goalId,
            workflow: 'notify',
            params: { text: hostile },
          }),
      );
      assert.equal(cancelled.shown.length, 1);
      assert.match(cancelled.shown[0]!.detail, /asked by a command call/);
      assert.equal(store.load(goalId).state.todos.length, before, 'Cancel added nothing');

      await withModals(
        (action) => action,
        () =>
          vscode.commands.executeCommand('loopx.runWorkflow', {
            goalId,
            workflow: 'notify',
            params: { text: hostile },
          }),
      );
      const state = store.load(goalId).state;
      const post = state.todos.find((t) => t.title === `Post ${hostile}`);
      assert.ok(post?.action, 'the todo was added');
      assert.deepEqual(shellWords(post.action), ['echo', hostile]);
      assert.equal(fs.existsSync(path.join(ws, 'pwned')), false);
    });
  });

  describe('Open Dashboard in Browser in the real host', function () {
    it('starts the status server and opens a one-time login link that sets an HttpOnly, SameSite=Strict cookie', async () => {
      const { statusServer } = await api();
      let opened: vscode.Uri | undefined;
      const external = (async (u: vscode.Uri) => {
        opened = u;
        return true;
      }) as typeof vscode.env.openExternal;
      await withEnvStub('openExternal', external, () =>
        vscode.commands.executeCommand('loopx.openDashboardInBrowser'),
      );
      const url = await until('the login link was opened', () => opened);
      assert.equal(url.path.endsWith('/login'), true, url.toString());
      assert.match(url.query, /^code=/);
      assert.ok(statusServer.url, 'the server runs');
      // Through the address VS Code gave the browser: code-server's port forwarding, when it maps one.
      const login = url.toString(true);
      const base = login.slice(0, login.indexOf('/login?'));
      console.log(`      (opened ${base}/login?code=…; the server listens on ${statusServer.url})`);
      const first = await get(login);
      assert.equal(first.status, 303);
      const cookie = String(first.headers['set-cookie']?.[0] ?? '');
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      const page = await get(`${base}/`, { cookie: cookie.split(';')[0]! });
      assert.equal(page.status, 200);
      assert.match(page.body, /<title>LoopX Dashboard<\/title>/);
      const again = await get(login);
      assert.equal(again.status, 401, 'a login link works once');
      const noCookie = await get(`${base}/status`);
      assert.equal(noCookie.status, 401);
      await vscode.commands.executeCommand('loopx.stopStatusServer');
    });

    it('a vscode:// approve link from the browser page asks the person; a hostile link does nothing', async () => {
      const { dashboardLinks } = await api();
      const store = new Store(workspaceDir());
      const goalId = await newGoal('Linked gate');
      await withModals(
        (a) => a,
        () => vscode.commands.executeCommand('loopx.addTodo', { goalId, title: 'Deploy', gate: 'linked' }),
      );
      assert.equal(store.load(goalId).state.gates.find((g) => g.id === 'linked')?.status, 'pending');
      const link = vscode.Uri.parse(vscodeLinkFor({ type: 'approve-gate', goalId, gateId: 'linked' }));
      const { shown } = await withModals(
        () => undefined,
        () => Promise.resolve(dashboardLinks.handleUri(link)),
      );
      assert.equal(shown.length, 1, 'the person was asked');
      assert.match(shown[0]!.message, /Approve gate "linked"/);
      assert.equal(store.load(goalId).state.gates.find((g) => g.id === 'linked')?.status, 'pending');
      const refusedBefore = dashboardLinks.handled.refused;
      await withStub(
        'showErrorMessage',
        (async () => undefined) as unknown as typeof vscode.window.showErrorMessage,
        () =>
          Promise.resolve(
            dashboardLinks.handleUri(
              vscode.Uri.parse(
                `vscode://loopx.loopx-vscode/dashboard/approve-gate?goalId=../x&gateId=linked`,
              ),
            ),
          ),
      );
      assert.equal(dashboardLinks.handled.refused, refusedBefore + 1);
    });
  });
}
