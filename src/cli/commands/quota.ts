/** `loopx quota`: the interaction contract (should-run) and the budgets. */
import type { Command } from 'commander';
import type { CommitResult, Quota, Store } from '../../core/index';
import {
  goalStatus,
  goalStatusDoc,
  invoke,
  LoopxError,
  loosenedBy,
  quote,
  shouldRun,
  usageError,
} from '../../core/index';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, list, num } from '../define';
import { person } from '../person';
import { quotaText, shouldRunText } from '../text';

/** The budget flags `quota set` and `quota grant` share. */
interface BudgetFlags {
  goalId: string;
  turns?: number;
  tokens?: number;
  cost?: number;
  wallSeconds?: number;
}

/** The budgets the flags name, as the core names them. */
const budgetsOf = (o: BudgetFlags) => ({
  turns: o.turns,
  tokens: o.tokens,
  costUsd: o.cost,
  wallSeconds: o.wallSeconds,
});

const QUOTA_SCHEMA = 'loopx.quota/1';

/** The goal's quota after a change, from the state the change returned (no second read). */
function quotaJson(store: Store, goalId: string, res: CommitResult) {
  const { quota } = goalStatusDoc(res.state, new Date(store.now()), res.revision);
  return { schema: QUOTA_SCHEMA, goal_id: goalId, ...quota };
}

export function registerQuotaCommands(program: Command, act: Act) {
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
      .option(
        '--agent <name>',
        'the agent (default: LOOPX_AGENT or "agent"; with LOOPX_AGENT set, only that)',
      )
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
            ctx.warn(out.warnings ?? []);
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
          ctx.print({ schema: QUOTA_SCHEMA, goal_id: o.goalId, ...doc.quota }, () => quotaText(doc.quota));
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
        act((ctx, o: BudgetFlags & { cooldown?: number; windowHours?: number }) => {
          const given = budgetsOf(o);
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
          // An agent may only tighten. A loosening is a person's decision, signed with their key
          // like a grant; when there is no person to ask (no key, no terminal), it goes to the
          // capability as the agent's, whose refusal says what would loosen and who can do it.
          const loosens = loosenedBy(state.quota, q as Quota).length > 0;
          const asPerson = loosens ? personIfAny(ctx, 'loosen the quota', 'LoopX: Grant Quota') : undefined;
          const res = invoke(
            store,
            'quota.set',
            { goalId: o.goalId, quota: q },
            asPerson?.actor ?? ctx.actor(),
            { expectRevision: revision, signer: asPerson?.signer },
          );
          ctx.print(quotaJson(store, o.goalId, res), () => `quota of ${o.goalId} set`);
        }),
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
        act((ctx, o: BudgetFlags & { note?: string }) => {
          const { actor, signer } = person(ctx, 'grant quota', 'LoopX: Grant Quota');
          const store = ctx.store();
          const res = invoke(
            store,
            'quota.grant',
            {
              goalId: o.goalId,
              budgets: budgetsOf(o),
              note: o.note,
            },
            actor,
            { signer },
          );
          const out = quotaJson(store, o.goalId, res);
          ctx.print(
            out,
            () =>
              `granted; now ${Object.entries(out.budgets)
                .map(([k, u]) => `${k} ${u.left} left`)
                .join(', ')}`,
          );
        }),
      ),
    'loopx quota grant --goal-id G --turns 20 --note "one more day"',
  );
}

/**
 * The person at this terminal (or behind --passphrase-fd), or undefined when there is none to
 * ask: no key on this machine, no terminal. A wrong passphrase is still an error of its own.
 */
function personIfAny(ctx: CliContext, what: string, vscodeCommand: string) {
  try {
    return person(ctx, what, vscodeCommand);
  } catch (e) {
    if (e instanceof LoopxError && (e.reason === 'no_key' || e.reason === 'no_terminal')) return undefined;
    throw e;
  }
}
