/**
 * Todo commands: add a todo to a goal, and complete one with a summary recorded as evidence.
 *
 * Both act as the person. Arguments from other code only choose the goal and todo and fill in the
 * values: adding asks the person in a modal that shows the todo whole (a todo the person adds has
 * no review gate, unlike an agent's), and completing always asks. A todo with a command that an
 * agent does is completed by running the command (`loopx exec` under a contract), so that its
 * output is kept as evidence: the editor refuses to mark it done by hand.
 */
import * as vscode from 'vscode';
import type { GoalState, Todo } from '../../core/index';
import {
  findTodo,
  gatesFor,
  ID_PATTERN,
  ID_RULE,
  invoke,
  Owner,
  plainText,
  Priority,
  refused,
  usageError,
} from '../../core/index';
import { confirmDecision, confirmIfCalledWithArguments, whole } from './decisionModal';
import type { Arg, CommandDeps, CommandTable } from './shared';
import { argsOf, Cancelled, guardTrust, input, isNode, lineValidator, person, pickGoal } from './shared';

export function todoCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.addTodo': (a) => addTodo(deps, a),
    'loopx.completeTodo': (a) => completeTodo(deps, a),
  };
}

const goalLine = (state: GoalState) => `Goal: ${whole(state.title)} (${state.id})\n`;
const ownerText = (t: Pick<Todo, 'owner'>) => (t.owner === 'user' ? 'a person (you)' : 'an agent');

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
  const gate = await input({
    given: args.gate ?? (direct ? '' : undefined),
    prompt: 'Gate that must be approved first (empty: none)',
    placeHolder: 'prod',
    validateInput: (v) => (v && !ID_PATTERN.test(v) ? `a gate id is ${ID_RULE}` : undefined),
  });
  const owner =
    args.owner ??
    (direct
      ? 'agent'
      : ((await vscode.window.showQuickPick(['agent', 'user'], { placeHolder: 'Who does it?' })) as
          'agent' | 'user' | undefined));
  if (!owner) throw new Cancelled();
  // Checked before the modal shows them: what the person reads is what is recorded.
  if (!Owner.safeParse(owner).success) throw usageError('the owner is "agent" or "user"');
  if (args.priority !== undefined && !Priority.safeParse(args.priority).success)
    throw usageError('the priority is P0, P1, P2 or P3');
  const todo = {
    title: title.trim(),
    action: action.trim() || undefined,
    gate: gate || undefined,
    owner,
    priority: args.priority ?? 'P2',
  };
  // Typed into the boxes above, the todo is the person's own. Passed as arguments, it is only a
  // proposal: added as the person it skips the review an agent's command gets, so it is shown
  // whole, command included, and added only on the person's click.
  await confirmIfCalledWithArguments(a, () => {
    const state = ref.store.load(ref.goalId).state;
    // The rule todo.add applies: its own gate and the policy's gates for its command.
    const needed = gatesFor({ id: '', gate: todo.gate, action: todo.action }, ref.store.policy());
    const gates = needed.map((g) => g.id);
    const byPolicy = needed.some((g) => g.pattern !== undefined);
    const gateLine = gates.length
      ? `Gate${gates.length > 1 ? 's' : ''}: ${gates.join(', ')} must be approved first${byPolicy ? " (the workspace policy's gates for this command included)" : ''}\n`
      : 'Gate: none\n';
    return {
      message: `Add the todo "${plainText(todo.title)}" to goal "${plainText(state.title)}" as yours?`,
      detail:
        goalLine(state) +
        `Title: ${whole(todo.title)}\n` +
        (todo.action
          ? `Command: ${whole(todo.action)}\n`
          : 'Command: none (whoever does it uses their judgment)\n') +
        gateLine +
        `Owner: ${ownerText(todo)}\nPriority: ${todo.priority}\n` +
        (todo.action && todo.owner === 'agent'
          ? 'Added as yours, the command needs no review gate: agents may run it under a contract.\n'
          : 'It is added as yours.\n'),
      action: 'Add Todo',
      verb: 'add it',
    };
  });
  const res = invoke(ref.store, 'todo.add', { goalId: ref.goalId, ...todo }, person());
  return res.input.todoId as string;
}

const isOpen = (t: Todo) => t.status === 'open' || t.status === 'claimed';
/** What the editor may mark done by hand: a todo without a command, or a person's own. */
const completableByHand = (t: Todo) => isOpen(t) && (!t.action || t.owner === 'user');

async function completeTodo(deps: CommandDeps, a: Arg): Promise<boolean> {
  await guardTrust();
  const args = argsOf(a);
  const ref = await pickGoal(deps.workspaces, a, (s) => s.todos.some(completableByHand));
  const state = ref.store.load(ref.goalId).state;
  let todoId = isNode(a) && a.kind === 'todo' ? a.todo.id : args.todoId;
  if (!todoId) {
    const pick = await vscode.window.showQuickPick(
      state.todos.filter(completableByHand).map((t) => ({ label: t.title, description: t.id, t })),
      { placeHolder: 'Which todo is done?' },
    );
    if (!pick) throw new Cancelled();
    todoId = pick.t.id;
  }
  const todo = findTodo(state, todoId);
  if (!isOpen(todo))
    throw refused(`todo ${todo.id} is already ${todo.status}`, { todoId: todo.id, reason: 'todo_finished' });
  if (todo.action && todo.owner !== 'user') {
    // An agent's command is done when it ran: `loopx exec` runs it under a contract and keeps its
    // output and exit code as evidence. Marked done by hand, nothing would show that it ran.
    throw refused(
      `todo ${todo.id} has a command: it is completed by running it (an agent's contract lists it as \`loopx exec\`), so that its output is kept as evidence, not by hand from the editor`,
      { goalId: ref.goalId, todoId: todo.id, reason: 'todo_has_command' },
    );
  }
  const summary = await input({
    given: args.summary,
    prompt: 'What shows it is done? (recorded as evidence)',
    validateInput: (v) => (v.length > 4000 ? 'at most 4,000 characters' : undefined),
  });
  const evidence = summary.trim();
  await confirmDecision(a, () => ({
    message: `Mark the todo "${plainText(todo.title)}" of goal "${plainText(state.title)}" done?`,
    detail:
      goalLine(state) +
      `Todo: ${todo.id}: ${whole(todo.title)}\n` +
      `Owner: ${ownerText(todo)}${todo.status === 'claimed' ? `, claimed by ${whole(todo.claimedBy ?? '?')}` : ''}\n` +
      (todo.action
        ? `Command: ${whole(todo.action)}\nNothing is run: you confirm that this command was run and did what it should.\n`
        : 'Command: none (a judgment todo)\n') +
      `Evidence recorded with it: ${evidence ? whole(evidence, { multiLine: true }) : '(none)'}\n` +
      'It is marked done as you.\n',
    action: 'Mark Done',
    verb: 'mark it done',
  }));
  invoke(
    ref.store,
    'todo.complete',
    { goalId: ref.goalId, todoId: todo.id, summary: evidence || undefined },
    person(),
  );
  return true;
}
