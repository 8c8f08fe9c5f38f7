/**
 * The `loopx` command. Parsing is commander's; every command is a thin call into the core.
 * `run` never exits the process itself: it returns the exit code, so tests can call it in-process.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import {
  invoke,
  shouldRun,
  execUnderContract,
  verifyCommand,
  checkJudgment,
  goalStatus,
  statusAll,
  summaryAll,
  repair,
  listCapabilities,
  Store,
  LoopxError,
  refused,
  usageError,
  quote,
  checkId,
  checkContract,
  HOOK_EVENTS,
  HookPayload,
  preToolUse,
  sessionStart,
  stop,
} from '../core/index';
import type { Actor, InvokeResult } from '../core/index';
import { CliContext, EXIT, exitCodeFor } from './context';
import type { GlobalOptions, Io } from './context';
import { goalText, statusText, shouldRunText, summaryText, repairText, capabilitiesText } from './text';

declare const LOOPX_VERSION: string;
export const VERSION = typeof LOOPX_VERSION === 'string' ? LOOPX_VERSION : '0.0.0-dev';

const num = (what: string) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError(`${what} must be a number, not ${quote(v)}`);
  return n;
};
const list = (v: string, prev: string[] = []) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];
const count = (what: string) => (v: string) => {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError(`${what} must be a whole number from 1 up, not ${quote(v)}`);
  return n;
};

/** Options whose values are ids: checked up front, so an error names the flag (`--goal-id`), not a field. */
const ID_OPTIONS = new Set([
  'goalId',
  'todoId',
  'gateId',
  'runId',
  'contract',
  'todo',
  'gate',
  'dependsOn',
  'guards',
  'evidence',
]);
function checkIdOptions(cmd: Command) {
  for (const o of cmd.options) {
    const key = o.attributeName();
    if (!ID_OPTIONS.has(key)) continue;
    const v: unknown = cmd.getOptionValue(key);
    for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) checkId(x, o.long ?? key);
  }
}

function example(cmd: Command, ...lines: string[]) {
  return cmd.addHelpText(
    'after',
    `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`,
  );
}

/** Human-only commands need a person at a terminal: scripts and agents are refused here. */
function requireHuman(ctx: CliContext, what: string, vscodeCommand: string): Actor {
  const actor = ctx.actor();
  if (actor.kind !== 'user') {
    throw refused(
      `${what} is for a person: run it in an interactive terminal (standard input must be a TTY), ` +
        `or use "${vscodeCommand}" in VS Code. Agents and scripts cannot ${what}.`,
    );
  }
  return actor;
}

export async function run(argv: string[], io: Io): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = new Command();
  const ctxOf = (cmd: Command) => new CliContext(io, cmd.optsWithGlobals() as GlobalOptions);
  /** Wraps an action: the context is built from the global options; errors become exit codes. */
  const act =
    <A extends unknown[]>(fn: (ctx: CliContext, ...args: A) => unknown) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      checkIdOptions(cmd);
      const ctx = ctxOf(cmd);
      void ctx.json; // a bad LOOPX_FORMAT is a usage error before anything is done, not after
      const code = await fn(ctx, ...(args.slice(0, -1) as A));
      if (typeof code === 'number') exitCode = code;
    };

  program
    .name('loopx')
    .description(
      'LoopX: durable goals, signed per-turn contracts and human gates for long-running agent work.',
    )
    .version(VERSION, '--version', 'print the version')
    .addOption(new Option('--format <format>', 'output format').choices(['json', 'text']))
    .option('--json', 'same as --format json')
    .option(
      '--workspace <dir>',
      'the workspace (default: LOOPX_WORKSPACE, or the nearest folder above with .loopx/)',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      outputError: (s, write) => write(`loopx: ${s.replace(/^error: /, '')}`),
    });
  example(
    program,
    'loopx project_prompt create --title "Refactor Payment Module" --description "Extract retry logic" --json | jq -r .id',
    'loopx --format json quota should-run --goal-id G',
    'loopx status',
  );

  // --- init -----------------------------------------------------------------------------------
  example(
    program
      .command('init')
      .description('create .loopx/ in the current folder, or the one --workspace names (idempotent)')
      .action(
        act((ctx) => {
          // Like `git init`: here (or the folder named), not the workspace found above.
          const store = Store.init(ctx.givenWorkspaceDir() ?? io.cwd);
          ctx.print(
            { schema: 'loopx.init/1', workspace: store.workspace, root: store.root },
            () => `LoopX workspace ready in ${store.root}`,
          );
        }),
      ),
    'loopx init',
  );

  // --- goals (project_prompt is the brief's spelling) -----------------------------------------
  const createGoal = (
    ctx: CliContext,
    o: { title: string; description?: string; objective?: string; goalId?: string; turns?: number },
  ) => {
    const store = ctx.storeOrInit();
    const res = invoke(
      store,
      'goal.create',
      {
        goalId: o.goalId,
        title: o.title,
        objective: o.description ?? o.objective ?? '',
        ...(o.turns !== undefined
          ? { quota: { budgets: { turns: o.turns }, window: { kind: 'life' }, cooldownSeconds: 0 } }
          : {}),
      },
      ctx.actor(),
    );
    const doc = goalStatus(store, res.goalId);
    ctx.print(
      doc,
      () =>
        `created goal ${doc.id}: ${doc.title}\nnext: loopx todo add --goal-id ${doc.id} --title "..." --action "<command>"`,
    );
  };
  const listGoals = (ctx: CliContext, o: { all?: boolean }) => {
    const doc = statusAll(ctx.store());
    const goals = doc.goals.filter((g) => o.all || (g.status !== 'closed' && g.status !== 'cancelled'));
    ctx.warn(doc.errors.map((e) => `${e.goal_id}: ${e.message}`));
    ctx.print(goals, () =>
      goals.length
        ? statusText({ ...doc, goals, attention: [], errors: [] })
        : 'No goals. Create one: loopx project_prompt create --title "..." --description "..."',
    );
  };
  const transitionGoal =
    (t: 'pause' | 'resume' | 'close' | 'cancel') =>
    (ctx: CliContext, o: { goalId: string; reason?: string }) => {
      const store = ctx.store();
      const res = invoke(store, `goal.${t}`, { goalId: o.goalId, reason: o.reason }, ctx.actor());
      const doc = goalStatus(store, res.goalId);
      ctx.print(doc, () => `goal ${doc.id} is ${doc.status}`);
    };

  for (const [name, alias] of [
    ['project_prompt', 'project-prompt'],
    ['goal', undefined],
  ] as const) {
    const group = example(
      program
        .command(name)
        .description(
          name === 'goal' ? 'goal lifecycle' : 'create, list and close goals (the product brief’s spelling)',
        ),
      `loopx ${name} create --title "Refactor Payment Module" --description "Extract retry logic" --json | jq -r .id`,
      `loopx ${name} list --json`,
    );
    if (alias) group.alias(alias);
    example(
      group
        .command('create')
        .description('create a durable goal')
        .requiredOption('--title <title>', 'a short title')
        .option('--description <text>', 'the objective')
        .option('--objective <text>', 'the objective (same as --description)')
        .option('--goal-id <id>', 'choose the id (default: from the title)')
        .option('--turns <n>', 'turn budget (default: the policy’s)', num('--turns'))
        .action(act(createGoal)),
      `loopx ${name} create --title "Refactor Payment Module" --description "Extract retry logic" --json | jq -r .id`,
    );
    example(
      group
        .command('list')
        .description('list open goals (closed and cancelled with --all)')
        .option('--all', 'include closed and cancelled goals')
        .action(act(listGoals)),
      `loopx ${name} list --json | jq -r '.[0].id'`,
    );
    const transitions =
      name === 'goal' ? (['pause', 'resume', 'close', 'cancel'] as const) : (['close'] as const);
    for (const t of transitions) {
      example(
        group
          .command(t)
          .description(`${t} a goal`)
          .requiredOption('--goal-id <id>', 'the goal')
          .option('--reason <text>', 'why')
          .action(act(transitionGoal(t))),
        `loopx ${name} ${t} --goal-id refactor-payment-7k2f`,
      );
    }
    if (name === 'goal') {
      example(
        group
          .command('show')
          .description('a goal’s status (same as status --goal-id)')
          .requiredOption('--goal-id <id>', 'the goal')
          .action(
            act((ctx, o: { goalId: string }) => {
              const doc = goalStatus(ctx.store(), o.goalId);
              ctx.warn(doc.warnings);
              ctx.print(doc, () => goalText(doc));
            }),
          ),
        'loopx goal show --goal-id refactor-payment-7k2f',
      );
    }
  }

  // --- todos ----------------------------------------------------------------------------------
  const todo = example(
    program.command('todo').description('the goal’s todo list'),
    'loopx todo add --goal-id G --title "Run the tests" --action "npm test"',
    'loopx todo list --goal-id G',
  );
  const todoResult = (ctx: CliContext, res: InvokeResult, verb: string) => {
    const todoId = (res.input.todoId as string) ?? '';
    const t = res.state.todos.find((x) => x.id === todoId);
    ctx.print(
      { schema: 'loopx.todo-change/1', goal_id: res.goalId, revision: res.revision, todo: t },
      () =>
        `${verb} todo ${todoId}${t ? `: ${t.title} (${t.status})` : ''}${t?.gate && res.state.gates.find((g) => g.id === t.gate)?.status === 'pending' ? `\ngate ${t.gate} is pending: a person approves it with loopx gate approve --goal-id ${res.goalId} --gate-id ${t.gate}` : ''}`,
    );
  };
  example(
    todo
      .command('add')
      .description(
        'add a todo (an agent runs its --action under a contract; --gate makes it wait for a person)',
      )
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--title <title>', 'what to do')
      .option('--todo-id <id>', 'choose the id')
      .addOption(new Option('--owner <owner>', 'who does it').choices(['agent', 'user']).default('agent'))
      .addOption(new Option('--priority <p>', 'priority').choices(['P0', 'P1', 'P2', 'P3']).default('P2'))
      .option('--action <command>', 'the shell command that does it')
      .option('--gate <gate-id>', 'a gate that must be approved first (requested now if new)')
      .option('--depends-on <ids>', 'todo ids that must be done first (comma-separated, repeatable)', list)
      .action(
        act(
          (
            ctx,
            o: {
              goalId: string;
              title: string;
              todoId?: string;
              owner: string;
              priority: string;
              action?: string;
              gate?: string;
              dependsOn?: string[];
            },
          ) => {
            const res = invoke(ctx.store(), 'todo.add', { ...o, dependsOn: o.dependsOn ?? [] }, ctx.actor());
            todoResult(ctx, res, 'added');
          },
        ),
      ),
    'loopx todo add --goal-id G --title "Run the tests" --action "npm test"',
    'loopx todo add --goal-id G --title "Deploy" --action "./deploy.sh" --gate prod --depends-on t-abc123',
  );
  example(
    todo
      .command('list')
      .description('list a goal’s todos')
      .requiredOption('--goal-id <id>', 'the goal')
      .action(
        act((ctx, o: { goalId: string }) => {
          const doc = goalStatus(ctx.store(), o.goalId);
          ctx.print(doc.todos, () =>
            doc.todos.length
              ? goalText({ ...doc, attention: [], gates: [], runs: [], warnings: [] })
                  .split('\n')
                  .slice(doc.objective ? 3 : 2)
                  .join('\n')
                  .trim()
              : 'no todos yet',
          );
        }),
      ),
    'loopx todo list --goal-id G --json',
  );
  example(
    todo
      .command('claim')
      .description('claim an open todo')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--by <name>', 'who (default: you)')
      .action(
        act((ctx, o: { goalId: string; todoId: string; by?: string }) => {
          todoResult(ctx, invoke(ctx.store(), 'todo.claim', o, ctx.actor()), 'claimed');
        }),
      ),
    'loopx todo claim --goal-id G --todo-id t-abc123',
  );
  example(
    todo
      .command('done')
      .description('mark a todo done, with what shows it')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--summary <text>', 'what was done (recorded as evidence)')
      .option('--evidence <ids>', 'evidence ids (comma-separated)', list)
      .option('--contract <id>', 'the contract that lists this judgment todo (agents)')
      .action(
        act(
          (
            ctx,
            o: { goalId: string; todoId: string; summary?: string; evidence?: string[]; contract?: string },
          ) => {
            const store = ctx.store();
            let runId: string | undefined;
            if (o.contract) {
              const c = checkJudgment(store, o.contract, o.todoId);
              if (c.goal.id !== o.goalId)
                throw refused(`contract ${o.contract} belongs to goal ${c.goal.id}, not ${o.goalId}`);
              runId = c.run.id;
            }
            const res = invoke(
              store,
              'todo.complete',
              { goalId: o.goalId, todoId: o.todoId, summary: o.summary, evidence: o.evidence ?? [], runId },
              ctx.actor(),
            );
            todoResult(ctx, res, 'completed');
          },
        ),
      ),
    'loopx todo done --goal-id G --todo-id t-abc123 --summary "Reviewed the diff; no change needed"',
  );
  example(
    todo
      .command('cancel')
      .description('cancel a todo')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--reason <text>', 'why')
      .action(
        act((ctx, o: { goalId: string; todoId: string; reason?: string }) => {
          todoResult(ctx, invoke(ctx.store(), 'todo.cancel', o, ctx.actor()), 'cancelled');
        }),
      ),
    'loopx todo cancel --goal-id G --todo-id t-abc123 --reason "not needed"',
  );
  example(
    todo
      .command('update')
      .description('change a todo’s title, priority or note')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo')
      .option('--title <title>', 'new title')
      .addOption(new Option('--priority <p>', 'new priority').choices(['P0', 'P1', 'P2', 'P3']))
      .option('--note <text>', 'a note')
      .action(
        act((ctx, o: { goalId: string; todoId: string }) => {
          todoResult(ctx, invoke(ctx.store(), 'todo.update', o, ctx.actor()), 'updated');
        }),
      ),
    'loopx todo update --goal-id G --todo-id t-abc123 --priority P0',
  );

  // --- gates ----------------------------------------------------------------------------------
  const gate = example(
    program.command('gate').description('approval gates: work that waits for a person'),
    'loopx gate list --goal-id G',
    'loopx gate approve --goal-id G --gate-id prod --note "reviewed the plan"',
  );
  const gateResult = (ctx: CliContext, res: InvokeResult, verb: string) => {
    const g = res.state.gates.find((x) => x.id === res.input.gateId);
    ctx.print(
      { schema: 'loopx.gate-change/1', goal_id: res.goalId, revision: res.revision, gate: g },
      () => `${verb} gate ${res.input.gateId as string}${g ? ` (${g.status})` : ''}`,
    );
  };
  example(
    gate
      .command('request')
      .description('ask a person to approve something')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--gate-id <id>', 'the gate')
      .option('--title <title>', 'what is asked')
      .option('--reason <text>', 'why it needs a person')
      .option('--guards <todo-ids>', 'the todos it guards (comma-separated)', list)
      .action(
        act(
          (
            ctx,
            o: { goalId: string; gateId: string; title?: string; reason?: string; guards?: string[] },
          ) => {
            gateResult(
              ctx,
              invoke(
                ctx.store(),
                'gate.request',
                { ...o, reason: o.reason ?? '', guards: o.guards ?? [] },
                ctx.actor(),
              ),
              'requested',
            );
          },
        ),
      ),
    'loopx gate request --goal-id G --gate-id prod --reason "deploys to production"',
  );
  example(
    gate
      .command('approve')
      .description('approve a pending gate (a person, at a terminal)')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--gate-id <id>', 'the gate')
      .option('--note <text>', 'a note for the record')
      .action(
        act((ctx, o: { goalId: string; gateId: string; note?: string }) => {
          const actor = requireHuman(ctx, 'approve a gate', 'LoopX: Approve Gate');
          gateResult(ctx, invoke(ctx.store(), 'gate.approve', o, actor), 'approved');
        }),
      ),
    'loopx gate approve --goal-id G --gate-id prod --note "reviewed the plan"',
  );
  example(
    gate
      .command('reject')
      .description('reject a pending gate; the open todos it guards are cancelled (a person)')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--gate-id <id>', 'the gate')
      .option('--note <text>', 'why')
      .action(
        act((ctx, o: { goalId: string; gateId: string; note?: string }) => {
          const actor = requireHuman(ctx, 'reject a gate', 'LoopX: Reject Gate');
          gateResult(ctx, invoke(ctx.store(), 'gate.reject', o, actor), 'rejected');
        }),
      ),
    'loopx gate reject --goal-id G --gate-id prod --note "not this week"',
  );
  example(
    gate
      .command('list')
      .description('a goal’s gates, pending first')
      .requiredOption('--goal-id <id>', 'the goal')
      .action(
        act((ctx, o: { goalId: string }) => {
          const doc = goalStatus(ctx.store(), o.goalId);
          ctx.print(
            doc.gates,
            () =>
              doc.gates.map((g) => `${g.status.padEnd(8)} ${g.id}  ${g.title}  ${g.reason}`).join('\n') ||
              'no gates',
          );
        }),
      ),
    'loopx gate list --goal-id G',
  );

  // --- evidence, runs, rewards -----------------------------------------------------------------
  example(
    example(
      program.command('evidence').description('evidence records'),
      'loopx evidence add --goal-id G --kind note --summary "checked the logs"',
    )
      .command('add')
      .description('record evidence for a run or a todo')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--summary <text>', 'what it shows')
      .addOption(
        new Option('--kind <kind>', 'kind').choices(['command', 'test', 'note', 'file']).default('note'),
      )
      .option('--run-id <id>', 'the run')
      .option('--todo-id <id>', 'the todo')
      .option('--command <command>', 'the command it came from')
      .option('--exit-code <n>', 'its exit code', num('--exit-code'))
      .option('--duration-ms <n>', 'how long it took', num('--duration-ms'))
      .action(
        act((ctx, o: Record<string, unknown>) => {
          const res = invoke(ctx.store(), 'evidence.add', o, ctx.actor());
          ctx.print(
            {
              schema: 'loopx.evidence-change/1',
              goal_id: res.goalId,
              revision: res.revision,
              evidence_id: res.input.evidenceId,
            },
            () => `recorded evidence ${res.input.evidenceId as string}`,
          );
        }),
      ),
    'loopx evidence add --goal-id G --todo-id t-abc123 --kind test --summary "42 passed" --exit-code 0',
  );
  const runCmd = example(
    program.command('run').description('runs (agent turns)'),
    'loopx run spend --goal-id G --run-id run-7k2f9x3a --tokens 12000 --cost 0.04',
  );
  example(
    runCmd
      .command('spend')
      .description('report what an open run spent')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--run-id <id>', 'the run')
      .option('--tokens <n>', 'tokens', num('--tokens'))
      .option('--cost <usd>', 'cost in USD', num('--cost'))
      .option('--wall-seconds <s>', 'wall time', num('--wall-seconds'))
      .action(
        act(
          (
            ctx,
            o: { goalId: string; runId: string; tokens?: number; cost?: number; wallSeconds?: number },
          ) => {
            const res = invoke(
              ctx.store(),
              'run.spend',
              {
                goalId: o.goalId,
                runId: o.runId,
                tokens: o.tokens,
                costUsd: o.cost,
                wallSeconds: o.wallSeconds,
              },
              ctx.actor(),
            );
            const r = res.state.runs.find((x) => x.id === o.runId);
            ctx.print(
              { schema: 'loopx.run-change/1', goal_id: res.goalId, run: r },
              () => `run ${o.runId} spent ${JSON.stringify(r?.spend)}`,
            );
          },
        ),
      ),
    'loopx run spend --goal-id G --run-id run-7k2f9x3a --tokens 12000 --cost 0.04',
  );
  example(
    example(
      program.command('reward').description('structured human feedback'),
      'loopx reward add --goal-id G --run-id run-7k2f9x3a --score 0.8 --comment "Good approach"',
    )
      .command('add')
      .description('score one run (a person, at a terminal)')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--run-id <id>', 'the run')
      .requiredOption('--score <n>', 'from -1 to 1', num('--score'))
      .option('--comment <text>', 'what was good or bad', '')
      .option('--lesson <text>', 'what to do differently next time')
      .action(
        act((ctx, o: { goalId: string; runId: string; score: number; comment: string; lesson?: string }) => {
          const actor = requireHuman(ctx, 'record a reward', 'LoopX: Record Reward');
          const res = invoke(ctx.store(), 'reward.add', o, actor);
          ctx.print(
            {
              schema: 'loopx.reward-change/1',
              goal_id: res.goalId,
              reward_id: res.input.rewardId,
              revision: res.revision,
            },
            () => `recorded reward ${res.input.rewardId as string} (${o.score}) for run ${o.runId}`,
          );
        }),
      ),
    'loopx reward add --goal-id G --run-id run-7k2f9x3a --score 0.8 --comment "Good approach but needs more edge case handling."',
  );

  // --- the contract ---------------------------------------------------------------------------
  const quota = example(
    program.command('quota').description('the interaction contract and the budgets'),
    'loopx --format json quota should-run --goal-id G',
    'loopx quota show --goal-id G',
  );
  example(
    quota
      .command('should-run')
      .description(
        'may an agent take a turn now, and exactly what may it run? (opens a run with a signed contract)',
      )
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--agent <name>', 'the agent (default: LOOPX_AGENT or "agent")')
      .option('--preview', 'answer without opening a run')
      .option('--ttl-minutes <n>', 'contract lifetime', num('--ttl-minutes'))
      .option('--abilities <list>', 'what the agent can do: exec, judgment (default both)', list)
      .action(
        act(
          (
            ctx,
            o: {
              goalId: string;
              agent?: string;
              preview?: boolean;
              ttlMinutes?: number;
              abilities?: string[];
            },
          ) => {
            for (const a of o.abilities ?? [])
              if (a !== 'exec' && a !== 'judgment')
                throw usageError(`--abilities: ${quote(a)} is not exec or judgment`);
            const out = shouldRun(
              ctx.store(),
              {
                goalId: o.goalId,
                agent: ctx.agentName(o.agent),
                preview: o.preview,
                ttlMinutes: o.ttlMinutes,
                abilities: o.abilities as ('exec' | 'judgment')[] | undefined,
              },
              ctx.actor(),
            );
            ctx.print(out, () => shouldRunText(out));
          },
        ),
      ),
    "loopx --format json quota should-run --goal-id G | jq -r '.interaction_contract.cli_channel.next_cli_actions[]'",
  );
  example(
    quota
      .command('show')
      .description('budgets, spend and what is left')
      .requiredOption('--goal-id <id>', 'the goal')
      .action(
        act((ctx, o: { goalId: string }) => {
          const doc = goalStatus(ctx.store(), o.goalId);
          ctx.print({ schema: 'loopx.quota/1', goal_id: o.goalId, ...doc.quota }, () =>
            [
              `window: ${doc.quota.window}, cooldown ${doc.quota.cooldown_seconds} s`,
              ...Object.entries(doc.quota.budgets).map(
                ([k, u]) => `${k.padEnd(12)} ${u.used} of ${u.limit} used, ${u.left} left`,
              ),
              `spent in all: ${JSON.stringify(doc.quota.spend)}`,
            ].join('\n'),
          );
        }),
      ),
    'loopx quota show --goal-id G',
  );
  example(
    quota
      .command('set')
      .description(
        'change the budgets, the cooldown or the window; what is not given stays as it is (agents may only tighten)',
      )
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--turns <n>', 'turn budget', num('--turns'))
      .option('--tokens <n>', 'token budget', num('--tokens'))
      .option('--cost <usd>', 'cost budget in USD', num('--cost'))
      .option('--wall-seconds <s>', 'wall-time budget', num('--wall-seconds'))
      .option('--cooldown <s>', 'seconds between turns', num('--cooldown'))
      .option(
        '--window-hours <h>',
        'count spend over a rolling window of h hours (0: over the goal’s life)',
        num('--window-hours'),
      )
      .action(
        act(
          (
            ctx,
            o: {
              goalId: string;
              turns?: number;
              tokens?: number;
              cost?: number;
              wallSeconds?: number;
              cooldown?: number;
              windowHours?: number;
            },
          ) => {
            const given = { turns: o.turns, tokens: o.tokens, costUsd: o.cost, wallSeconds: o.wallSeconds };
            if (
              Object.values(given).every((v) => v === undefined) &&
              o.cooldown === undefined &&
              o.windowHours === undefined
            ) {
              throw usageError(
                'nothing to set: give --turns, --tokens, --cost, --wall-seconds, --cooldown or --window-hours',
              );
            }
            const store = ctx.store();
            // Flags change what they name and nothing else: a budget not mentioned is kept, not dropped.
            const { state, revision } = store.load(o.goalId);
            const budgets: Record<string, number | undefined> = { ...state.quota.budgets };
            for (const [k, v] of Object.entries(given)) if (v !== undefined) budgets[k] = v;
            const q = {
              budgets,
              window:
                o.windowHours === undefined
                  ? state.quota.window
                  : o.windowHours > 0
                    ? { kind: 'rolling', hours: o.windowHours }
                    : { kind: 'life' },
              cooldownSeconds: o.cooldown ?? state.quota.cooldownSeconds,
            };
            invoke(store, 'quota.set', { goalId: o.goalId, quota: q }, ctx.actor(), {
              expectRevision: revision,
            });
            const doc = goalStatus(store, o.goalId);
            ctx.print(
              { schema: 'loopx.quota/1', goal_id: o.goalId, ...doc.quota },
              () => `quota of ${o.goalId} set`,
            );
          },
        ),
      ),
    'loopx quota set --goal-id G --turns 50 --cost 5 --cooldown 60',
  );
  example(
    quota
      .command('grant')
      .description('grant more budget (a person, at a terminal)')
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--turns <n>', 'more turns', num('--turns'))
      .option('--tokens <n>', 'more tokens', num('--tokens'))
      .option('--cost <usd>', 'more USD', num('--cost'))
      .option('--wall-seconds <s>', 'more wall time', num('--wall-seconds'))
      .option('--note <text>', 'why')
      .action(
        act(
          (
            ctx,
            o: {
              goalId: string;
              turns?: number;
              tokens?: number;
              cost?: number;
              wallSeconds?: number;
              note?: string;
            },
          ) => {
            const actor = requireHuman(ctx, 'grant quota', 'LoopX: Grant Quota');
            const store = ctx.store();
            invoke(
              store,
              'quota.grant',
              {
                goalId: o.goalId,
                budgets: { turns: o.turns, tokens: o.tokens, costUsd: o.cost, wallSeconds: o.wallSeconds },
                note: o.note,
              },
              actor,
            );
            const doc = goalStatus(store, o.goalId);
            ctx.print(
              { schema: 'loopx.quota/1', goal_id: o.goalId, ...doc.quota },
              () =>
                `granted; now ${Object.entries(doc.quota.budgets)
                  .map(([k, u]) => `${k} ${u.left} left`)
                  .join(', ')}`,
            );
          },
        ),
      ),
    'loopx quota grant --goal-id G --turns 20 --note "one more day"',
  );

  example(
    program
      .command('exec')
      .description('run one command that the contract lists, recording its evidence')
      .requiredOption('--contract <id>', 'the contract id')
      .requiredOption('--todo <id>', 'the todo it does')
      .argument('<command...>', 'the command, exactly as the contract lists it (after --)')
      .action(
        act(async (ctx, words: string[], o: { contract: string; todo: string }) => {
          const store = ctx.store();
          const command = words.join(' ');
          const res = await execUnderContract(store, {
            contractId: o.contract,
            todoId: o.todo,
            command,
            actor: { ...ctx.actor(), kind: ctx.actor().kind === 'user' ? 'user' : 'agent' },
            onOutput: (chunk, stream) =>
              (stream === 'stdout' ? io.stdout : io.stderr)(chunk.toString('utf8')),
          });
          io.stderr(
            `loopx: exit ${res.exitCode} in ${(res.durationMs / 1000).toFixed(2)} s; evidence ${res.evidenceId}${res.todoDone ? `; todo ${o.todo} done` : ''}\n`,
          );
          return res.exitCode;
        }),
      ),
    "loopx exec --contract c-0123456789 --todo t-abc123 -- 'npm test'",
  );
  example(
    example(
      program.command('contract').description('interaction contracts'),
      "loopx contract verify --contract c-0123456789 --todo t-abc123 -- 'npm test'",
    )
      .command('verify')
      .description('check a contract, or a command against it, without running anything')
      .requiredOption('--contract <id>', 'the contract id')
      .option('--todo <id>', 'the todo')
      .argument('[command...]', 'the command to check (after --)')
      .action(
        act((ctx, words: string[], o: { contract: string; todo?: string }) => {
          const store = ctx.store();
          if (o.todo === undefined && words.length === 0) {
            // The contract alone: found, signed, unexpired, its run open and its goal active.
            const { goal, run, contract } = checkContract(store, o.contract);
            const actions = contract.actions.map((a) => ({ todo_id: a.todoId, command: a.command }));
            ctx.print(
              {
                schema: 'loopx.contract-verify/1',
                valid: true,
                contract_id: contract.id,
                goal_id: goal.id,
                run_id: run.id,
                expires_at: contract.expiresAt,
                actions,
                judgment: contract.judgment,
              },
              () =>
                [
                  `ok: contract ${contract.id} of goal ${goal.id} (run ${run.id}) is valid until ${contract.expiresAt}`,
                  ...actions.map((a) => `  ${a.todo_id}: ${a.command}`),
                  ...contract.judgment.map((t) => `  ${t}: (judgment)`),
                ].join('\n'),
            );
            return;
          }
          const v = verifyCommand(store, {
            contractId: o.contract,
            todoId: o.todo,
            command: words.length ? words.join(' ') : undefined,
          });
          ctx.print(
            {
              schema: 'loopx.contract-verify/1',
              valid: true,
              contract_id: v.contract.id,
              goal_id: v.goal.id,
              run_id: v.run.id,
              todo_id: v.todo.id,
              command: v.command,
              expires_at: v.contract.expiresAt,
            },
            () =>
              `ok: contract ${v.contract.id} allows todo ${v.todo.id}: ${v.command} (until ${v.contract.expiresAt})`,
          );
        }),
      ),
    "loopx contract verify --contract c-0123456789 --todo t-abc123 -- 'npm test'",
  );

  example(
    program
      .command('status-server')
      .description('serve the status read-only over HTTP on 127.0.0.1 (bearer token, GET only) until stopped')
      .option('--port <n>', 'port (0 picks a free one)', num('--port'), 8080)
      .option('--host <host>', 'address to bind', '127.0.0.1')
      .option(
        '--unsafe-allow-non-loopback',
        'allow binding an address other than loopback (exposes the status beyond this machine)',
      )
      .action(
        act(async (ctx, o: { port: number; host: string; unsafeAllowNonLoopback?: boolean }) => {
          const store = ctx.store();
          const { startStatusServer } = await import('../server/status-server');
          const server = await startStatusServer({
            workspace: store.workspace,
            port: o.port,
            host: o.host,
            allowUnsafeHost: o.unsafeAllowNonLoopback,
            log: (line) => io.stderr(`${line}\n`),
          });
          ctx.print(
            { schema: 'loopx.status-server/1', url: server.url, port: server.port, token: server.token },
            () =>
              `LoopX status server on ${server.url}\ntoken: ${server.token}\n  curl -H "Authorization: Bearer ${server.token}" ${server.url}/status\n(Ctrl+C stops it)`,
          );
          await new Promise<void>((resolve) => {
            const stop = () => void server.close().then(resolve);
            process.once('SIGINT', stop);
            process.once('SIGTERM', stop);
          });
        }),
      ),
    'loopx status-server --port 8080',
  );

  // --- agents ---------------------------------------------------------------------------------
  example(
    program
      .command('mcp')
      .description(
        'run the LoopX MCP server over stdio (agent tools and status resources; nothing human-only)',
      )
      .option('--agent <name>', 'the agent name recorded on its events (default: the MCP client’s name)')
      .action(
        act(async (ctx, o: { agent?: string }) => {
          const { serveMcp } = await import('../server/mcp');
          await serveMcp(ctx.store(), { version: VERSION, agent: o.agent ?? io.env.LOOPX_AGENT });
        }),
      ),
    'claude mcp add loopx -- loopx mcp',
  );
  example(
    program
      .command('hook')
      .description('answer an agent host’s hook event (JSON on stdin): pre-tool-use, session-start, stop')
      .argument('<event>', 'pre-tool-use | session-start | stop')
      .option('--agent <name>', 'the agent name (default: LOOPX_AGENT or "agent")')
      .option('--goal-id <id>', 'the goal (default: LOOPX_GOAL, or the only active goal)')
      .action(
        act(async (ctx, event: string, o: { agent?: string; goalId?: string }) => {
          const normalized = event
            .replace(/([a-z])([A-Z])/g, '$1-$2')
            .toLowerCase()
            .replace(/_/g, '-');
          if (!(HOOK_EVENTS as readonly string[]).includes(normalized))
            throw usageError(`unknown hook event ${quote(event)}: use ${HOOK_EVENTS.join(', ')}`);
          // A guard that cannot read its input, or find the workspace, must not wave a tool through.
          const refuse = (why: string) => {
            const reason = `LoopX: ${why}; refusing`;
            io.stdout(
              JSON.stringify({
                hookSpecificOutput: {
                  hookEventName: 'PreToolUse',
                  permissionDecision: 'deny',
                  permissionDecisionReason: reason,
                },
              }) + '\n',
            );
            io.stderr(reason + '\n');
            return 2;
          };
          let payload: HookPayload;
          try {
            const raw = await (io.readStdin?.() ?? Promise.resolve(''));
            if (!raw.trim()) throw new Error('standard input is empty');
            const json: unknown = JSON.parse(raw);
            const parsed = HookPayload.safeParse(json);
            if (!parsed.success) throw new Error('the hook input is not a JSON object');
            payload = parsed.data;
          } catch (e) {
            if (normalized === 'pre-tool-use')
              return refuse(`cannot read the hook input (${(e as Error).message.slice(0, 200)})`);
            throw usageError(`cannot read the hook input: ${(e as Error).message.slice(0, 200)}`);
          }
          const agent = o.agent ?? io.env.LOOPX_AGENT ?? 'agent';
          const actor: Actor = { kind: 'agent', id: agent, channel: 'hook' };
          const goalId = o.goalId ?? (io.env.LOOPX_GOAL || undefined);
          const sessionId =
            payload.session_id ?? (typeof payload.sessionId === 'string' ? payload.sessionId : undefined);
          let answer;
          try {
            const store = ctx.store();
            answer =
              normalized === 'pre-tool-use'
                ? preToolUse(store, payload)
                : normalized === 'session-start'
                  ? sessionStart(store, { goalId, agent }, actor)
                  : stop(store, { goalId, agent, sessionId }, actor);
          } catch (e) {
            if (normalized === 'pre-tool-use') return refuse((e as Error).message);
            throw e;
          }
          io.stdout(JSON.stringify(answer.output) + '\n');
          if (answer.reason) io.stderr(answer.reason + '\n');
          return answer.exitCode;
        }),
      ),
    'echo \'{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}\' | loopx hook pre-tool-use',
  );

  // --- reading --------------------------------------------------------------------------------
  example(
    program
      .command('status')
      .description('every goal, or one goal in full')
      .option('--goal-id <id>', 'one goal')
      .action(
        act((ctx, o: { goalId?: string }) => {
          const store = ctx.store();
          if (o.goalId) {
            const doc = goalStatus(store, o.goalId);
            ctx.warn(doc.warnings);
            ctx.print(doc, () => goalText(doc));
          } else {
            const doc = statusAll(store);
            ctx.print(doc, () => statusText(doc));
          }
        }),
      ),
    'loopx status',
    'loopx status --goal-id G --json | jq -r .status',
  );
  example(
    program
      .command('summary_all')
      .alias('summary-all')
      .description('end the open run, summarise its evidence, and show the goal’s progress')
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--agent <name>', 'end only this agent’s run (default: LOOPX_AGENT, else every open run)')
      .action(
        act((ctx, o: { goalId: string; agent?: string }) => {
          const doc = summaryAll(ctx.store(), o.goalId, ctx.actor(), {
            agent: o.agent ?? (io.env.LOOPX_AGENT || undefined),
          });
          ctx.print(doc, () => summaryText(doc));
        }),
      ),
    'loopx summary_all --goal-id G',
  );
  example(
    program
      .command('self-repair')
      .alias('self_repair')
      .description('find and fix what a crash or a hand edit left behind')
      .option('--goal-id <id>', 'one goal (default: all)')
      .option('--dry-run', 'report only; change nothing')
      .action(
        act((ctx, o: { goalId?: string; dryRun?: boolean }) => {
          const report = repair(ctx.store(), { goalId: o.goalId, dryRun: o.dryRun });
          ctx.print(report, () => repairText(report));
          return report.findings.some((f) => !f.fixed && !report.dry_run) ? EXIT.corrupt : EXIT.ok;
        }),
      ),
    'loopx self-repair --goal-id G --dry-run',
  );
  example(
    program
      .command('verify')
      .description('check the hash chain of every goal’s event log (or one)')
      .option('--goal-id <id>', 'one goal')
      .action(
        act((ctx, o: { goalId?: string }) => {
          const store = ctx.store();
          const ids = o.goalId ? [o.goalId] : store.goalIds();
          const results = ids.map((id) => {
            try {
              const log = store.readLog(id);
              return {
                goal_id: id,
                ok: true,
                events: log.events.length,
                ...(log.torn ? { torn_tail_line: log.torn.line } : {}),
              };
            } catch (e) {
              // A goal asked for by id that does not exist is not a broken chain: exit 3, not 6.
              if (e instanceof LoopxError && e.kind === 'not_found') throw e;
              return { goal_id: id, ok: false, error: (e as Error).message };
            }
          });
          ctx.print(
            { schema: 'loopx.verify/1', ok: results.every((r) => r.ok), goals: results },
            () =>
              results
                .map((r) =>
                  'events' in r
                    ? `ok      ${r.goal_id}: ${r.events} events${'torn_tail_line' in r ? ` (incomplete line ${r.torn_tail_line}: run self-repair)` : ''}`
                    : `BROKEN  ${r.goal_id}: ${r.error}`,
                )
                .join('\n') || 'no goals',
          );
          return results.every((r) => r.ok) ? EXIT.ok : EXIT.corrupt;
        }),
      ),
    'loopx verify',
  );
  example(
    program
      .command('log')
      .description('a goal’s event history')
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--limit <n>', 'the last n events', count('--limit'))
      .action(
        act((ctx, o: { goalId: string; limit?: number }) => {
          const log = ctx.store().readLog(o.goalId);
          const events = o.limit ? log.events.slice(-o.limit) : log.events;
          ctx.print(events, () =>
            events
              .map(
                (e) =>
                  `${String(e.seq).padStart(5)} ${e.ts} ${`${e.actor.kind}:${e.actor.id}`.padEnd(20)} ${e.actor.channel.padEnd(7)} ${e.type.padEnd(16)} ${JSON.stringify(e.data).slice(0, 100)}`,
              )
              .join('\n'),
          );
        }),
      ),
    'loopx log --goal-id G --limit 20',
  );
  example(
    program
      .command('capabilities')
      .description('every state change the control plane knows, with what it touches and who may call it')
      .action(
        act((ctx) => {
          const caps = listCapabilities();
          ctx.print(caps, () => capabilitiesText(caps));
        }),
      ),
    'loopx capabilities --format json',
  );

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.ok;
      // `commander.help` is also how a missing subcommand ends (`loopx`, `loopx todo`): help on stderr, a usage error.
      if (e.code === 'commander.help') return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return EXIT.usage;
    }
    if (e instanceof LoopxError) {
      io.stderr(`loopx: ${e.message}\n`);
      return exitCodeFor(e);
    }
    // A failed system call (a path that is a file, a folder we may not write...) is about the
    // user's files, not a bug in loopx: its message names the call and the path; no stack trace.
    const errno = e as NodeJS.ErrnoException;
    if (errno instanceof Error && typeof errno.code === 'string' && typeof errno.syscall === 'string') {
      io.stderr(`loopx: ${errno.message}\n`);
      return EXIT.error;
    }
    io.stderr(`loopx: unexpected error: ${(e as Error)?.stack ?? String(e)}\n`);
    return EXIT.error;
  }
}
