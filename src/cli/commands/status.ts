/** Reading a workspace: status, summaries, the event log and its checks, the capability list. */
import type { Command } from 'commander';
import {
  builtinWorkflows,
  capabilityCatalog,
  goalStatus,
  historyLines,
  listCapabilities,
  needsYou,
  policyStatus,
  problemText,
  readHistory,
  repair,
  runOfContract,
  statusAll,
  summaryAll,
  usageError,
  verifyGoal,
  workflowCatalogEntry,
} from '../../core/index';
import { EXIT } from '../context';
import type { Act } from '../define';
import { count, example } from '../define';
import {
  catalogText,
  goalText,
  needsYouText,
  repairText,
  statusText,
  summaryText,
  verifyText,
} from '../text';
import { followLog } from './follow';

export function registerStatusCommands(program: Command, act: Act) {
  example(
    program
      .command('status')
      .description('every goal, or one goal in full')
      .option('--goal-id <id>', 'one goal')
      .option('--all', 'what needs you across every workspace on this machine (see loopx workspaces)')
      .action(
        act((ctx, o: { goalId?: string; all?: boolean }) => {
          if (o.all) {
            if (o.goalId) throw usageError('give --all or --goal-id, not both');
            const doc = needsYou({ configDir: ctx.configDir() });
            ctx.print(doc, () => needsYouText(doc, 'needs you'));
            return;
          }
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
    'loopx status --all',
  );
  example(
    program
      .command('summary_all')
      .alias('summary-all')
      .description('end your open run, summarise its evidence, and show the goal’s progress')
      .requiredOption('--goal-id <id>', 'the goal')
      .option(
        '--agent <name>',
        'whose run to end (default: LOOPX_AGENT, else "agent"; with LOOPX_AGENT set, only that)',
      )
      .option(
        '--contract <id>',
        'end the run of this contract (as its finish_with says); with LOOPX_AGENT set, only your own',
      )
      .action(
        act((ctx, o: { goalId: string; agent?: string; contract?: string }) => {
          if (o.contract !== undefined && o.agent !== undefined)
            throw usageError('give --contract or --agent, not both');
          const store = ctx.store();
          // Only the caller's own run ends: the run of the contract given (the contract's own
          // finish_with, whichever channel issued it), else the runs of the agent named by
          // LOOPX_AGENT (or --agent), else of the default "agent" that `quota should-run` opens
          // runs for. Other agents' runs (MCP and chat sessions, other shells) go on; the summary
          // still covers the whole goal.
          const doc = summaryAll(
            store,
            o.goalId,
            ctx.actor(),
            o.contract !== undefined
              ? { runId: runOfContract(store, o.goalId, o.contract, ctx.callerAgent()) }
              : { agent: ctx.agentName(o.agent) },
          );
          ctx.print(doc, () => summaryText(doc));
        }),
      ),
    'loopx summary_all --goal-id G',
    'loopx summary_all --goal-id G --contract c-0123456789',
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
      .description(
        'check every writer’s hash chain of every goal’s logs (or one goal’s), and the merged state',
      )
      .option('--goal-id <id>', 'one goal')
      .action(
        act((ctx, o: { goalId?: string }) => {
          const store = ctx.store();
          const ids = o.goalId ? [o.goalId] : store.goalIds();
          const results = ids.map((id) => verifyGoal(store, id));
          const policy = policyStatus(store);
          const { id, problem } = store.identity();
          const workspace = { ...(id ? { id } : {}), ...(problem ? { problem } : {}) };
          const ok = results.every((r) => r.ok);
          ctx.print({ schema: 'loopx.verify/2', ok, goals: results, policy, workspace }, () =>
            verifyText(results, policy, workspace),
          );
          return ok ? EXIT.ok : EXIT.corrupt;
        }),
      ),
    'loopx verify',
  );
  example(
    program
      .command('log')
      .description('a goal’s event history: every writer’s events, merged in the order replay applies them')
      .requiredOption('--goal-id <id>', 'the goal')
      .option('--limit <n>', 'the last n events', count('--limit'))
      .option(
        '--follow',
        'then print each event as any writer appends it, until Ctrl-C (SIGINT) or SIGTERM (exit 0); with --json, one event a line (NDJSON) instead of an array',
      )
      .action(
        act((ctx, o: { goalId: string; limit?: number; follow?: boolean }) => {
          if (o.follow) return followLog(ctx, o.goalId, o.limit);
          const store = ctx.store();
          const { events } = readHistory(store, o.goalId);
          const names = store.writerNames();
          const shown = o.limit ? events.slice(-o.limit) : events;
          ctx.print(
            shown.map((m) => ({
              ...m.ev,
              log: m.log,
              ...(names.has(m.log) ? { writer_name: names.get(m.log) } : {}),
            })),
            () => historyLines(shown, names).join('\n'),
          );
        }),
      ),
    'loopx log --goal-id G --limit 20',
    'loopx log --goal-id G --limit 5 --follow',
    'loopx log --goal-id G --follow --json | jq -c \'select(.type == "gate.requested")\'',
  );
  example(
    program
      .command('capabilities')
      .description(
        'every state change the control plane knows (core capabilities and workflows), with what it touches and who may call it',
      )
      .action(
        act((ctx) => {
          // Outside a workspace: the core's and the built-in workflows (no workspace files to read).
          const dir = ctx.workspaceDir();
          const { entries, problems } = dir
            ? capabilityCatalog(ctx.store())
            : {
                entries: [...listCapabilities(), ...builtinWorkflows().map(workflowCatalogEntry)],
                problems: [],
              };
          ctx.warn(problems.map((p) => `${problemText(p)} (this workflow is left out)`));
          ctx.print(entries, () => catalogText(entries));
        }),
      ),
    'loopx capabilities --format json',
  );
}
