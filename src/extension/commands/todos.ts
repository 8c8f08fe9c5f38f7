/** Todo commands: add a todo to a goal, and complete one with a summary recorded as evidence. */
import * as vscode from 'vscode';
import { invoke, ID_RULE } from '../../core/index';
import { argsOf, Cancelled, guardTrust, input, isNode, lineValidator, person, pickGoal } from './shared';
import type { Arg, CommandDeps, CommandTable } from './shared';

export function todoCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.addTodo': (a) => addTodo(deps, a),
    'loopx.completeTodo': (a) => completeTodo(deps, a),
  };
}

async function addTodo(deps: CommandDeps, a: Arg): Promise<string> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a, (s) => s.status === 'active' || s.status === 'paused');
  const title = await input({
    given: args.title,
    prompt: 'Todo title',
    validateInput: lineValidator('The title', 200),
  });
  const direct = args.title !== undefined;
  const action = await input({
    given: args.action ?? (direct ? '' : undefined),
    prompt: 'Command an agent runs for it (empty: the agent uses its judgment)',
    placeHolder: 'npm test',
    validateInput: lineValidator('The command', 2000, true),
  });
  let gate = args.gate ?? '';
  if (!direct) {
    gate = await input({
      prompt: 'Gate that must be approved first (empty: none)',
      placeHolder: 'prod',
      validateInput: (v) =>
        v && !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(v) ? `a gate id is ${ID_RULE}` : undefined,
    });
  }
  const owner =
    args.owner ??
    (direct
      ? 'agent'
      : ((await vscode.window.showQuickPick(['agent', 'user'], { placeHolder: 'Who does it?' })) as
          'agent' | 'user' | undefined));
  if (!owner) throw new Cancelled();
  const res = invoke(
    ref.store,
    'todo.add',
    {
      goalId: ref.goalId,
      title: title.trim(),
      action: action.trim() || undefined,
      gate: gate || undefined,
      owner,
      priority: args.priority ?? 'P2',
    },
    person(),
  );
  return res.input.todoId as string;
}

async function completeTodo(deps: CommandDeps, a: Arg): Promise<boolean> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a, (s) =>
    s.todos.some((t) => t.status === 'open' || t.status === 'claimed'),
  );
  let todoId = isNode(a) && a.kind === 'todo' ? a.todo.id : args.todoId;
  if (!todoId) {
    const open = ref.store
      .load(ref.goalId)
      .state.todos.filter((t) => t.status === 'open' || t.status === 'claimed');
    const pick = await vscode.window.showQuickPick(
      open.map((t) => ({ label: t.title, description: t.id, t })),
      { placeHolder: 'Which todo is done?' },
    );
    if (!pick) throw new Cancelled();
    todoId = pick.t.id;
  }
  const summary = await input({
    given: args.summary,
    prompt: 'What shows it is done? (recorded as evidence)',
    validateInput: (v) => (v.length > 4000 ? 'at most 4,000 characters' : undefined),
  });
  invoke(
    ref.store,
    'todo.complete',
    { goalId: ref.goalId, todoId, summary: summary.trim() || undefined },
    person(),
  );
  return true;
}
