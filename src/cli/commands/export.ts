/**
 * `loopx export`: a goal's record to keep or share. Text (the default) is a Markdown report; JSON
 * (`--json`, `--format json`: the global output option, so no second `--format`) is the whole
 * history, the goal's status document and every event.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { exportDoc, goalStatus, writeExportFile } from '../../core/index';
import type { Act } from '../define';
import { example } from '../define';
import { readGoal, readGoalHistory } from '../read-goal';
import { exportMarkdown } from '../text/export';

export function registerExportCommand(program: Command, act: Act) {
  example(
    program
      .command('export')
      .description(
        'a goal’s record: a Markdown report (objective, todos, gates and decisions, runs with evidence and rewards, spend), or with --json the whole history (loopx.export/1)',
      )
      .requiredOption('--goal-id <id>', 'the goal')
      .option(
        '--output <file>',
        'write it to this file (atomically; never inside .loopx/) instead of standard output',
      )
      .action(
        act((ctx, o: { goalId: string; output?: string }) => {
          const { store, state } = readGoal(ctx, o.goalId);
          const { events } = readGoalHistory(store, o.goalId);
          const status = goalStatus(store, o.goalId);
          const doc = exportDoc(state, store.policy(), status, events, store.writerNames(), store.now());
          const format = ctx.json ? 'json' : 'markdown';
          const content = ctx.json ? `${JSON.stringify(doc, null, 2)}\n` : exportMarkdown(doc);
          if (o.output === undefined) {
            ctx.io.stdout(content);
            return;
          }
          const file = writeExportFile(store, path.resolve(ctx.io.cwd, o.output), content);
          ctx.print(
            {
              schema: 'loopx.export-file/1',
              goal_id: state.id,
              file,
              format,
              bytes: Buffer.byteLength(content),
              events: events.length,
            },
            () =>
              `wrote the ${format === 'json' ? 'JSON export' : 'Markdown report'} of goal ${state.id} to ${file}`,
          );
        }),
      ),
    'loopx export --goal-id G > report.md',
    'loopx export --goal-id G --output report.md',
    'loopx export --goal-id G --json --output goal.json',
  );
}
