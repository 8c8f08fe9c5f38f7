/** `loopx gate`: approval gates, work that waits for a person. */
import type { Command } from 'commander';
import type { InvokeResult } from '../../core/index';
import {
  decidableGate,
  gateDoc,
  gateFacts,
  goalStatus,
  invoke,
  needsYou,
  usageError,
} from '../../core/index';
import type { CliContext } from '../context';
import type { Act } from '../define';
import { example, list } from '../define';
import { person } from '../person';
import { readGoal, readGoalHistory } from '../read-goal';
import { gateListText, needsYouText } from '../text';
import { gateShowText } from '../text/records';

const gateResult = (ctx: CliContext, res: InvokeResult, verb: string) => {
  const g = res.state.gates.find((x) => x.id === res.input.gateId);
  ctx.print(
    { schema: 'loopx.gate-change/1', goal_id: res.goalId, revision: res.revision, gate: g },
    () => `${verb} gate ${res.input.gateId as string}${g ? ` (${g.status})` : ''}`,
  );
};

export function registerGateCommands(program: Command, act: Act) {
  const gate = example(
    program.command('gate').description('approval gates: work that waits for a person'),
    'loopx gate list --goal-id G',
    'loopx gate approve --goal-id G --gate-id prod --note "reviewed the plan"',
  );
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
  // A person's two decisions: the same flags and flow, each signed with the person's key.
  const decisions = [
    {
      name: 'approve',
      description: 'approve a pending gate (a person, at a terminal)',
      note: 'a note for the record',
      what: 'approve a gate',
      vscodeCommand: 'LoopX: Approve Gate',
      capability: 'gate.approve',
      done: 'approved',
      example: 'loopx gate approve --goal-id G --gate-id prod --note "reviewed the plan"',
    },
    {
      name: 'reject',
      description: 'reject a pending gate; the open todos it guards are cancelled (a person)',
      note: 'why',
      what: 'reject a gate',
      vscodeCommand: 'LoopX: Reject Gate',
      capability: 'gate.reject',
      done: 'rejected',
      example: 'loopx gate reject --goal-id G --gate-id prod --note "not this week"',
    },
  ] as const;
  for (const d of decisions) {
    example(
      gate
        .command(d.name)
        .description(d.description)
        .requiredOption('--goal-id <id>', 'the goal')
        .requiredOption('--gate-id <id>', 'the gate')
        .option('--note <text>', d.note)
        .action(
          act((ctx, o: { goalId: string; gateId: string; note?: string }) => {
            // The person reads the full facts with the passphrase prompt, and signs only those.
            const store = ctx.store();
            const state = store.load(o.goalId).state;
            // A gate that is missing or already decided is said before the passphrase is asked for.
            const policy = store.policy();
            const g = decidableGate(state, policy, o.gateId, d.done);
            const facts = gateFacts(state, policy, g, d.name);
            const { actor, signer } = person(ctx, d.what, d.vscodeCommand, `${facts.text}\n\n`);
            const input = { ...o, shown: facts.work };
            gateResult(ctx, invoke(store, d.capability, input, actor, { signer }), d.done);
          }),
        ),
      d.example,
    );
  }
  example(
    gate
      .command('list')
      .description('a goal’s gates, pending first; or every pending gate on this machine')
      .option('--goal-id <id>', 'the goal')
      .option('--all', 'pending gates across every workspace on this machine (see loopx workspaces)')
      .action(
        act((ctx, o: { goalId?: string; all?: boolean }) => {
          if (o.all) {
            if (o.goalId) throw usageError('give --all or --goal-id, not both');
            const all = needsYou({ configDir: ctx.configDir(), kinds: ['gate'] });
            ctx.print(all, () => needsYouText(all, 'pending gates'));
            return;
          }
          if (!o.goalId) throw usageError('give --goal-id <id> (one goal) or --all (every workspace)');
          const doc = goalStatus(ctx.store(), o.goalId);
          ctx.print(doc.gates, () => gateListText(doc.gates));
        }),
      ),
    'loopx gate list --goal-id G',
    'loopx gate list --all --json | jq -r \'.items[] | "\\(.workspace.name) \\(.goal_id) \\(.id)"\'',
  );
  example(
    gate
      .command('show')
      .description('one gate in full: who asked and why, the work it guards, the decision')
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--gate-id <id>', 'the gate')
      .action(
        act((ctx, o: { goalId: string; gateId: string }) => {
          const { store, state } = readGoal(ctx, o.goalId);
          const { events } = readGoalHistory(store, o.goalId);
          const doc = gateDoc(state, store.policy(), o.gateId, { events, writerNames: store.writerNames() });
          ctx.print(doc, () => gateShowText(doc));
        }),
      ),
    'loopx gate show --goal-id G --gate-id prod',
    'loopx gate show --goal-id G --gate-id prod --json | jq .decision',
  );
}
