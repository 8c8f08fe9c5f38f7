/** The evidence capability: recording what shows that work was done. */
import { z } from 'zod';
import { Artifact, draft, EvidenceKind, Id, lazy, Line, newId, refused, ShownText } from '../model';
import { AllActors, findRun, findTodo, goalId } from './shared';
import type { DefineCapability } from './types';

export function defineEvidenceCapabilities(define: DefineCapability): void {
  define({
    id: 'evidence.add',
    summary: 'Record evidence (a command’s result, a test, a note, a file) for a run or a todo.',
    touches: ['evidence'],
    gates: 'none',
    quota: 'none',
    actors: AllActors,
    input: lazy(() =>
      z.object({
        goalId,
        evidenceId: Id.optional(),
        runId: Id.optional(),
        todoId: Id.optional(),
        kind: EvidenceKind.default('note'),
        summary: ShownText(4000),
        command: Line(2000).optional(),
        exitCode: z.number().int().optional(),
        durationMs: z.number().nonnegative().optional(),
        artifact: Artifact.optional(),
      }),
    ),
    prepare: (i) => ({ ...i, evidenceId: i.evidenceId ?? newId('ev', 8) }),
    plan: (s, i) => {
      if (s.evidence.some((e) => e.id === i.evidenceId))
        throw refused(`goal ${s.id} already has evidence ${i.evidenceId}`, { reason: 'evidence_exists' });
      if (i.runId) findRun(s, i.runId);
      if (i.todoId) findTodo(s, i.todoId);
      const { goalId: _g, evidenceId, ...rest } = i;
      return [draft('evidence.added', { evidence: { id: evidenceId!, ...rest } })];
    },
  });
}
