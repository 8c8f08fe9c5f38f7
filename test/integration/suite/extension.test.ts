/**
 * The extension in a real VS Code host (code-server's extension host), on the demo workspace:
 * goal refactor-payment-module with todos, a pending gate staging-deploy, a run with a reward.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  api,
  clickNotificationLink,
  loopxCli,
  notificationLinks,
  until,
  withNotifications,
  shownText,
  withStub,
  workspaceDir,
  EXTENSION_ID,
} from './util';
import type { ContractPreview } from '../../../src/core/index';
import { shouldRun, Store } from '../../../src/core/index';
import type { Node } from '../../../src/extension/views/tree';

const GOAL = 'refactor-payment-module';

export function registerExtensionTests(): void {
  describe('LoopX extension in VS Code', function () {
    it('activates on a workspace that has .loopx/ and reports its activation time', async () => {
      const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
      await until('activation', () => ext.isActive);
      const a = await api();
      assert.ok(a.activationMs > 0 && a.activationMs < 2000, `activation took ${a.activationMs} ms`);
      console.log(
        `    activation time in the host: ${a.activationMs.toFixed(1)} ms (VS Code ${vscode.version})`,
      );
    });

    it('registers every command it contributes, under the LoopX category', async () => {
      const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
      const contributed = ext.packageJSON.contributes.commands as { command: string; category: string }[];
      const registered = new Set(await vscode.commands.getCommands(true));
      for (const c of contributed) {
        assert.equal(c.category, 'LoopX');
        assert.ok(registered.has(c.command), `${c.command} is not registered`);
      }
      assert.ok(contributed.length >= 16);
    });

    it('shows the goal with Todos, Gates, Evidence and Runs, pending gates first', async () => {
      const { tree } = await api();
      const roots = tree.getChildren();
      const goal = roots.find((n) => n.kind === 'goal' && n.entry.id === GOAL);
      assert.ok(goal, `goal ${GOAL} in ${JSON.stringify(roots.map((n) => n.kind))}`);
      const item = tree.getTreeItem(goal!);
      assert.equal(item.label, 'Refactor Payment Module');
      // The row says what needs the person; progress and quota are in its tooltip.
      assert.equal(item.description, '1 to approve');
      assert.match(
        shownText((item.tooltip as vscode.MarkdownString).value),
        /^Active · 1 of 5 todos done · 1 gate to approve · 19 turns left$/m,
      );
      const groups = tree.getChildren(goal);
      assert.deepEqual(
        groups.map((g) => (g.kind === 'group' ? `${g.group}:${g.count}` : g.kind)),
        ['todos:5', 'gates:1', 'evidence:1', 'runs:1'],
      );
      const todos = tree.getChildren(groups[0]);
      const inventory = todos.find((t) => t.kind === 'todo' && t.todo.id === 'inventory')!;
      assert.equal(tree.getTreeItem(inventory).contextValue, 'todo.done.agent.command');
      // The inline Complete shows on work done by hand, not on an agent's command (run by exec).
      const menus = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.menus[
        'view/item/context'
      ] as { command: string; when: string }[];
      const when = menus.find(
        (m) => m.command === 'loopx.completeTodo' && /inline/.test(JSON.stringify(m)),
      )!.when;
      const pattern = new RegExp(/viewItem =~ \/(.+)\/"?$/.exec(when)![1]!);
      const contextOf = (id: string) =>
        String(tree.getTreeItem(todos.find((t) => t.kind === 'todo' && t.todo.id === id)!).contextValue);
      assert.deepEqual(
        ['breaker', 'extract-retry', 'review-api'].map((id) => [contextOf(id), pattern.test(contextOf(id))]),
        [
          ['todo.open.agent.command', false],
          ['todo.open.agent', true],
          ['todo.open.user', true],
        ],
      );
      const gates = tree.getChildren(groups[1]);
      assert.equal(tree.getTreeItem(gates[0]!).contextValue, 'gate.pending');
      const runs = tree.getChildren(groups[3]);
      const run = tree.getTreeItem(runs[0]!);
      assert.equal(run.label, 'demo-agent', 'who ran, not the run id');
      assert.match(String(run.description), /^(just now|\d+ min ago) · \$0\.21 · ★ 0\.8$/);
    });

    it('shows pending gates and the quota in the status bar', async () => {
      const { statusBar } = await api();
      await until('status bar text', () => /1 gate/.test(statusBar.text));
      assert.match(statusBar.text, /^LoopX \$\(shield\) 1 gate · \d+ turns left$/);
    });

    it('notices a gate made pending by a CLI process, shows it in the tree and asks the person', async () => {
      const { tree } = await api();
      const text = await withNotifications(async (shown) => {
        const r = loopxCli([
          'todo',
          'add',
          '--goal-id',
          GOAL,
          '--todo-id',
          'prod-migrate',
          '--title',
          'Run the prod migration',
          '--action',
          'echo migrate',
          '--gate',
          'prod-db',
        ]);
        assert.equal(r.status, 0, r.stderr);
        const n = await until(
          `the notification (shown so far: ${JSON.stringify(shown)})`,
          () => shown.find((m) => m.title.includes('Gate prod-db ')),
          10_000,
        );
        return n.title;
      });
      assert.match(
        text,
        /^Gate prod-db of goal "Refactor Payment Module" waits for your decision, asked by OS user .* at the command line \(unsigned\)/,
      );
      assert.deepEqual(
        notificationLinks(text).map((l) => l.label),
        ['Approve', 'Reject', 'Show in LoopX'],
        'its only links are its own actions',
      );
      const goal = tree.getChildren().find((n) => n.kind === 'goal' && n.entry.id === GOAL)!;
      const gatesGroup = tree.getChildren(goal).find((g) => g.kind === 'group' && g.group === 'gates')!;
      const gateIds = tree
        .getChildren(gatesGroup)
        .map((n) => (n.kind === 'gate' ? `${n.gate.id}:${n.gate.status}` : ''));
      assert.ok(gateIds.includes('prod-db:pending'), gateIds.join(','));
    });

    it('approves from the notification, after the modal with the facts, writes a signed human event, and the notification ends', async () => {
      const modals: string[] = [];
      await withNotifications((shown) =>
        withStub(
          'showWarningMessage',
          (async (msg: string, opts: vscode.MessageOptions, ...items: string[]) => {
            modals.push(`${msg}\n${opts?.detail ?? ''}`);
            return opts?.modal && msg.includes('"qa-signoff"') ? items[0] : undefined;
          }) as unknown as typeof vscode.window.showWarningMessage,
          async () => {
            const r = loopxCli([
              'gate',
              'request',
              '--goal-id',
              GOAL,
              '--gate-id',
              'qa-signoff',
              '--reason',
              'QA must sign off',
            ]);
            assert.equal(r.status, 0, r.stderr);
            const n = await until(
              'the notification',
              () => shown.find((m) => m.title.includes('Gate qa-signoff ')),
              10_000,
            );
            await clickNotificationLink(n.title, 'Approve');
            const store = new Store(workspaceDir());
            await until(
              'the approval',
              () => store.load(GOAL).state.gates.find((g) => g.id === 'qa-signoff')?.status === 'approved',
              15_000,
            );
            await until('the notification to end', () => n.ended, 10_000);
          },
        ),
      );
      const modal = modals.join('\n');
      assert.match(
        modal,
        /Reason, in the requester’s words \(not LoopX’s\):\n│ QA must sign off\n└ end of the requester’s words/,
      );
      assert.doesNotMatch(modal, /command call/, 'the notification’s own link is the person’s click');
      const store = new Store(workspaceDir());
      const ev = store
        .readLog(GOAL)
        .events.find((e) => e.type === 'gate.approved' && e.data.gateId === 'qa-signoff')!;
      assert.deepEqual(
        { kind: ev.actor.kind, channel: ev.actor.channel },
        { kind: 'user', channel: 'vscode' },
      );
      assert.ok(ev.sig, 'the approval carries a signature');
      // The editor's key was pinned when it was made, so replay gives the approval effect here.
      assert.ok(store.trust().key(ev.sig.keyId), 'the signing key is pinned in the config folder');
      assert.equal(store.load(GOAL).state.ignored, undefined, 'no decision was ignored');
    });

    it('approves nothing when other code calls the command with arguments and the person does not confirm', async () => {
      const r = loopxCli(['gate', 'request', '--goal-id', GOAL, '--gate-id', 'sneaky', '--reason', 'x']);
      assert.equal(r.status, 0, r.stderr);
      const store = new Store(workspaceDir());
      const before = store.readLog(GOAL).events.length;
      const modals: { msg: string; modal?: boolean }[] = [];
      const ok = await withStub(
        'showWarningMessage',
        (async (msg: string, opts: vscode.MessageOptions) => {
          modals.push({ msg, modal: opts?.modal });
          return undefined; // the person closes the dialog
        }) as unknown as typeof vscode.window.showWarningMessage,
        () =>
          vscode.commands.executeCommand('loopx.approveGate', {
            goalId: GOAL,
            gateId: 'sneaky',
            fromNotification: true,
          }),
      );
      assert.equal(ok, undefined);
      assert.deepEqual(modals, [
        { msg: 'Approve gate "sneaky" of goal "Refactor Payment Module"?', modal: true },
      ]);
      assert.equal(store.load(GOAL).state.gates.find((g) => g.id === 'sneaky')!.status, 'pending');
      assert.equal(store.readLog(GOAL).events.length, before, 'nothing was written');
    });

    it('approves a gate through the command with a note once the person confirms, and rejects another', async () => {
      const confirm = (async (_msg: string, _opts: vscode.MessageOptions, action: string) =>
        action) as unknown as typeof vscode.window.showWarningMessage;
      const ok = await withStub('showWarningMessage', confirm, () =>
        vscode.commands.executeCommand('loopx.approveGate', {
          goalId: GOAL,
          gateId: 'prod-db',
          note: 'reviewed the migration',
        }),
      );
      assert.equal(ok, true);
      const store = new Store(workspaceDir());
      const g = store.load(GOAL).state.gates.find((x) => x.id === 'prod-db')!;
      assert.equal(g.status, 'approved');
      assert.equal(g.note, 'reviewed the migration');
      assert.equal(g.decidedBy?.channel, 'vscode');
      const rejected = await withStub('showWarningMessage', confirm, () =>
        vscode.commands.executeCommand('loopx.rejectGate', {
          goalId: GOAL,
          gateId: 'staging-deploy',
          note: 'not this week',
        }),
      );
      assert.equal(rejected, true);
      const after = store.load(GOAL).state;
      assert.equal(after.gates.find((x) => x.id === 'staging-deploy')!.status, 'rejected');
      assert.equal(after.todos.find((t) => t.id === 'deploy-staging')!.status, 'cancelled');
    });

    it('runs the goal commands on the demo state with the inputs supplied, each decision confirmed in a modal', async () => {
      const store = new Store(workspaceDir());
      // Called with arguments, a command acts only once the person clicks its modal's button.
      const modals: string[] = [];
      const confirm = (async (msg: string, _o: vscode.MessageOptions, action: string) => {
        modals.push(msg);
        return action;
      }) as unknown as typeof vscode.window.showWarningMessage;
      const confirmed = <T>(command: string, args: object) =>
        withStub('showWarningMessage', confirm, () => vscode.commands.executeCommand<T>(command, args));
      const goalId = await vscode.commands.executeCommand<string>('loopx.createGoal', {
        title: 'Integration goal',
        objective: 'made by the test',
      });
      assert.match(goalId, /^integration-goal-/);
      const todoId = await confirmed<string>('loopx.addTodo', { goalId, title: 'say hi', action: 'echo hi' });
      assert.ok(store.load(goalId).state.todos.some((t) => t.id === todoId && t.action === 'echo hi'));
      // Preview Contract shows what an agent would get, and opens nothing.
      const preview = await vscode.commands.executeCommand<ContractPreview>('loopx.requestContract', {
        goalId,
      });
      assert.equal(preview.answer.decision, 'run');
      assert.deepEqual(
        preview.commands.map((c) => c.todoId),
        [todoId],
      );
      assert.equal(store.load(goalId).state.runs.length, 0, 'the preview opened no run');
      // An agent opens its own turn: the run the reward below is for.
      const contract = shouldRun(store, { goalId }, { kind: 'agent', id: 'it-reward-agent', channel: 'cli' });
      assert.equal(contract.interaction_contract.cli_channel.next_cli_actions.length, 1);
      const runId = store.load(goalId).state.runs[0]!.id;
      // A todo with a command is completed by running it (loopx exec), not by hand.
      const errors: string[] = [];
      const refusedComplete = await withStub(
        'showErrorMessage',
        (async (m: string) => {
          errors.push(m);
          return undefined;
        }) as typeof vscode.window.showErrorMessage,
        () => confirmed('loopx.completeTodo', { goalId, todoId, summary: 'said hi by hand' }),
      );
      assert.equal(refusedComplete, undefined);
      assert.match(errors[0] ?? '', /has a command: it is completed by running it/);
      const judged = await confirmed<string>('loopx.addTodo', { goalId, title: 'check the greeting' });
      assert.ok(await confirmed('loopx.completeTodo', { goalId, todoId: judged, summary: 'it reads well' }));
      assert.equal(store.load(goalId).state.todos.find((t) => t.id === judged)!.status, 'done');
      const rewardId = await confirmed<string>('loopx.recordReward', {
        goalId,
        runId,
        score: 0.5,
        comment: 'fine',
      });
      assert.match(rewardId, /^rw-/);
      assert.ok(await confirmed('loopx.grantQuota', { goalId, turns: 5 }));
      assert.equal(store.load(goalId).state.granted.turns, 5);
      const other = await vscode.commands.executeCommand<string>('loopx.createGoal', {
        title: 'Pausable',
        objective: '',
      });
      assert.equal(await vscode.commands.executeCommand('loopx.pauseGoal', { goalId: other }), 'paused');
      assert.equal(await confirmed('loopx.resumeGoal', { goalId: other }), 'active');
      assert.equal(await confirmed('loopx.closeGoal', { goalId: other }), 'closed');
      assert.deepEqual(modals, [
        'Add the todo "say hi" to goal "Integration goal" as yours?',
        'Add the todo "check the greeting" to goal "Integration goal" as yours?',
        'Mark the todo "check the greeting" of goal "Integration goal" done?',
        `Record a reward of 0.5 for run ${runId} of goal "Integration goal"?`,
        'Grant goal "Integration goal" 5 turns more?',
        'Resume goal "Pausable"?',
        'Close goal "Pausable"? A closed goal is read-only.',
      ]);
      const uri = await vscode.commands.executeCommand<vscode.Uri>('loopx.showEventLog', { goalId });
      const text = (await vscode.workspace.openTextDocument(uri)).getText();
      assert.match(text, /goal\.created/);
      assert.match(text, /reward\.added/);
      const reports = await vscode.commands.executeCommand<{ findings: unknown[] }[]>(
        'loopx.runSelfRepair',
        {},
      );
      assert.ok(Array.isArray(reports) && reports.length === 1);
      const events = store.readLog(goalId).events;
      assert.ok(
        events
          .filter((e) => e.type !== 'run.started' && e.type !== 'run.spend' && e.type !== 'todo.claimed')
          .every((e) => e.actor.kind === 'user' && e.actor.channel === 'vscode'),
      );
    });

    it('asks through input boxes and quick picks, validating what is typed', async () => {
      const validations: (string | undefined)[] = [];
      const answers = ['', 'Typed goal', 'objective typed'];
      const goalId = await withStub(
        'showInputBox',
        (async (o?: vscode.InputBoxOptions) => {
          const v = answers.shift()!;
          const check = await o?.validateInput?.(v);
          validations.push(typeof check === 'string' ? check : undefined);
          return check ? answers.shift() : v;
        }) as typeof vscode.window.showInputBox,
        async () => vscode.commands.executeCommand<string>('loopx.createGoal', {}),
      );
      assert.equal(validations[0], 'The title must not be empty');
      assert.match(goalId ?? '', /^objective-typed-|^typed-goal-/);
    });

    it('refuses clearly instead of failing silently', async () => {
      const errors: string[] = [];
      await withStub(
        'showErrorMessage',
        (async (m: string) => {
          errors.push(m);
          return undefined;
        }) as typeof vscode.window.showErrorMessage,
        async () => {
          await vscode.commands.executeCommand('loopx.approveGate', { goalId: GOAL, gateId: 'prod-db' });
        },
      );
      assert.match(errors[0] ?? '', /gate prod-db is approved .*only a pending gate can be approved/);
    });

    it('follows the files: a write by the CLI refreshes the tree within a second', async () => {
      const { tree } = await api();
      const before = Date.now();
      const r = loopxCli(['project_prompt', 'create', '--title', 'Made in a terminal', '--description', 'x']);
      assert.equal(r.status, 0, r.stderr);
      await until(
        'the new goal in the tree',
        () =>
          tree.getChildren().some((n: Node) => n.kind === 'goal' && n.entry.title === 'Made in a terminal'),
        3000,
      );
      console.log(`    tree refreshed ${Date.now() - before} ms after the CLI write`);
    });

    it("follows a pull: a teammate's log arriving in events/ refreshes the tree, named by its writer", async () => {
      const { tree } = await api();
      const store = new Store(workspaceDir());
      // A teammate's clone (the committed files, not local/) where they plan a goal of their own.
      const mate = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-teammate-'));
      fs.cpSync(store.root, path.join(mate, '.loopx'), {
        recursive: true,
        filter: (src) => path.relative(store.root, src).split(path.sep)[0] !== 'local',
      });
      const env = { LOOPX_WRITER_NAME: 'sam@laptop' };
      for (const args of [
        ['goal', 'create', '--goal-id', 'from-sam', '--title', 'Planned on a teammate machine'],
        ['todo', 'add', '--goal-id', 'from-sam', '--todo-id', 'sams-todo', '--title', 'Sam wrote this'],
      ]) {
        const r = loopxCli(args, mate, env);
        assert.equal(r.status, 0, r.stderr);
      }
      // The pull: git brings the teammate's log and name file; nothing else changes here.
      const writer = fs.readFileSync(path.join(mate, '.loopx', 'local', 'writer-id'), 'utf8').trim();
      assert.notEqual(writer, store.writerId());
      fs.cpSync(path.join(mate, '.loopx', 'goals', 'from-sam'), store.goalDir('from-sam'), {
        recursive: true,
      });
      fs.cpSync(path.join(mate, '.loopx', 'writers'), path.join(store.root, 'writers'), { recursive: true });
      const goal = await until(
        "the teammate's goal in the tree",
        () => tree.getChildren().find((n: Node) => n.kind === 'goal' && n.entry.id === 'from-sam'),
        3000,
      );
      const [todos] = tree.getChildren(goal);
      assert.deepEqual(
        tree.getChildren(todos).map((n: Node) => (n.kind === 'todo' ? n.todo.title : n.kind)),
        ['Sam wrote this'],
      );
      const uri = await vscode.commands.executeCommand<vscode.Uri>('loopx.showEventLog', {
        goalId: 'from-sam',
      });
      const text = (await vscode.workspace.openTextDocument(uri)).getText();
      assert.match(text, /^# from-sam: 2 events from 1 writer/m);
      assert.match(
        text,
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +sam@laptop +.+ \(cli\) +goal\.created/m,
        'each event names the clone that wrote it',
      );
      fs.rmSync(mate, { recursive: true, force: true });
    });

    it('shows what the PreToolUse hook refused an agent in a Refused group under the goal, newest first, as plain text', async () => {
      const { tree } = await api();
      const goalId = 'refusals';
      const made = loopxCli(['goal', 'create', '--goal-id', goalId, '--title', 'Refusals shown']);
      assert.equal(made.status, 0, made.stderr);
      const approve = `loopx gate approve --goal-id ${goalId} --gate-id ship`;
      const tried = ['rm -rf build', approve, 'echo "[x](command:loopx.approveGate)" <b>'];
      for (const command of tried) {
        // The hook as Claude Code runs it: the tool call on stdin, the agent's name in LOOPX_AGENT.
        const r = loopxCli(
          ['hook', 'pre-tool-use', '--goal-id', goalId],
          workspaceDir(),
          { LOOPX_AGENT: 'it-agent' },
          JSON.stringify({ tool_name: 'Bash', tool_input: { command }, cwd: workspaceDir() }),
        );
        assert.equal(r.status, 2, `refused: ${r.stdout}\n${r.stderr}`);
      }
      const goal = await until(
        'the goal in the tree',
        () => tree.getChildren().find((n: Node) => n.kind === 'goal' && n.entry.id === goalId),
        3000,
      );
      const group = await until(
        'its Refused group with the three refusals',
        () =>
          tree
            .getChildren(goal)
            .find((n: Node) => n.kind === 'group' && n.group === 'denied' && n.count === tried.length),
        3000,
      );
      const groupItem = tree.getTreeItem(group);
      assert.deepEqual([groupItem.label, groupItem.description], ['Refused', '3']);
      const items = tree.getChildren(group).map((n: Node) => tree.getTreeItem(n));
      assert.deepEqual(
        items.map((i) => i.label),
        [...tried].reverse(),
      );
      for (const i of items) {
        assert.match(String(i.description), /^it-agent · (just now|\d+ min ago)$/);
        assert.equal(i.contextValue, 'denial.enforced');
      }
      const tip = items[1]!.tooltip as vscode.MarkdownString;
      assert.equal(tip.isTrusted, false);
      // Store text is written with its punctuation escaped and spaces as &nbsp;: read back, it is the text.
      const words = shownText(tip.value);
      assert.match(
        words,
        /^Refused: Bash for agent it-agent at [A-Z][a-z]{2} \d+, \d\d:\d\d \((just now|\d+ min ago)\)$/m,
      );
      assert.match(words, /^Why \(human_only\): LoopX: .* is a person's decision/m);
      // What the agent tried is data: verbatim in a code block, escaped everywhere else (the
      // reason quotes it), so its link and tag are never Markdown or HTML.
      const hostile = (items[0]!.tooltip as vscode.MarkdownString).value;
      assert.ok(hostile.includes(`\n\`\`\`sh\n${tried[2]}\n\`\`\``), hostile);
      assert.doesNotMatch(hostile.replace(/```sh\n[\s\S]*?\n```/g, ''), /<b>|\[x\]\(command:/, hostile);
    });
  });
}
