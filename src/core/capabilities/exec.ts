/** The exec capability: recording what a contract command did (evidence, spend, the todo done). */
import { z } from 'zod';
import { Artifact, draft, Id, lazy, Line, newId, notFound, ShownText } from '../model';
import type { DefineCapability } from './types';

export function defineExecCapabilities(define: DefineCapability) {
  define({
    id: 'exec.record',
    summary: 'Record the result of a contract command: evidence, wall time, and the todo done on success.',
    touches: ['evidence', 'runs', 'todos'],
    gates: 'checked by exec before the command runs',
    quota: 'the wall time of the command',
    actors: ['agent', 'user', 'system'],
    // The command already ran: what happened is recorded even if the goal was closed meanwhile.
    onFinishedGoal: true,
    input: lazy(() =>
      z.object({
        goalId: Id,
        runId: Id,
        todoId: Id,
        command: Line(2000),
        exitCode: z.number().int(),
        durationMs: z.number().nonnegative(),
        summary: ShownText(4000),
        artifact: Artifact.optional(),
      }),
    ),
    plan: (s, i) => {
      const run = s.runs.find((r) => r.id === i.runId);
      if (!run) throw notFound(`goal ${s.id} has no run ${i.runId}`);
      const todo = s.todos.find((t) => t.id === i.todoId);
      if (!todo) throw notFound(`goal ${s.id} has no todo ${i.todoId}`);
      const evidenceId = newId('ev', 8);
      const events = [
        draft('evidence.added', {
          evidence: {
            id: evidenceId,
            runId: i.runId,
            todoId: i.todoId,
            kind: 'command',
            summary: i.summary,
            command: i.command,
            exitCode: i.exitCode,
            durationMs: i.durationMs,
            artifact: i.artifact,
          },
        }),
      ];
      // The command ran and took its time even if the run ended meanwhile; the spend still counts.
      if (!run.endedAt)
        events.push(draft('run.spend', { runId: i.runId, spend: { wallSeconds: i.durationMs / 1000 } }));
      if (i.exitCode === 0 && todo.status !== 'done' && todo.status !== 'cancelled') {
        events.push(draft('todo.completed', { todoId: i.todoId, evidence: [evidenceId] }));
      } else if (todo.status === 'claimed') {
        events.push(
          draft('todo.released', {
            todoId: i.todoId,
            reason: `command failed with exit code ${i.exitCode}`,
            by: todo.claimedBy,
          }),
        );
      }
      return events;
    },
  });
}
