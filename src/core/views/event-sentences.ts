/**
 * One event in words, for a person reading a goal's history (`loopx log`, the editor's event
 * log): what happened, to what, and why, on one line. The JSON of `loopx log --json` keeps the data.
 */
import type { LoopxEvent } from '../model';
import { oneLine } from '../model';
import { budgetAmount, budgetLabel, duration, listWords, plural, spendWords } from './people-text';

/** `: why` after a sentence, or nothing. */
const why = (s: string | undefined) => (s ? `: ${s}` : '');

/** Budgets that were given, as `turns 50, cost $5`. */
function budgetsWords(b: Record<string, number | undefined>): string {
  return Object.entries(b)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${budgetLabel(k)} ${budgetAmount(k, v as number)}`)
    .join(', ');
}

function sentence(e: LoopxEvent): string {
  switch (e.type) {
    case 'goal.created':
      return `created goal "${e.data.title}"`;
    case 'goal.paused':
    case 'goal.resumed':
    case 'goal.closed':
    case 'goal.cancelled':
      return `goal ${e.type.slice(5)}${why(e.data.reason)}`;
    case 'todo.added': {
      const t = e.data.todo;
      const extra = [
        t.owner === 'user' ? 'for a person' : '',
        t.gate ? `behind gate ${t.gate}` : '',
        t.dependsOn.length ? `after ${listWords(t.dependsOn)}` : '',
      ].filter(Boolean);
      return `added ${t.priority} todo ${t.id} "${t.title}"${extra.length ? ` (${extra.join(', ')})` : ''}${t.action ? `: $ ${t.action}` : ''}`;
    }
    case 'todo.claimed':
      return `${e.data.by} claimed todo ${e.data.todoId}${e.data.until ? ` (a lease until ${e.data.until})` : ''}`;
    case 'todo.renewed':
      return `${e.data.by} renewed the lease on todo ${e.data.todoId} until ${e.data.until}`;
    case 'todo.reopened':
      return `todo ${e.data.todoId} came due again (${e.data.due})`;
    case 'todo.released':
      return `released todo ${e.data.todoId}${e.data.by ? ` (claimed by ${e.data.by})` : ''}${why(e.data.reason)}`;
    case 'todo.updated': {
      const d = e.data;
      const what = [
        d.title !== undefined ? `title "${d.title}"` : '',
        d.priority ? `priority ${d.priority}` : '',
        d.note !== undefined ? `note "${d.note}"` : '',
      ].filter(Boolean);
      return `updated todo ${d.todoId}${what.length ? `: ${what.join(', ')}` : ''}`;
    }
    case 'todo.completed':
      return `todo ${e.data.todoId} done${e.data.evidence.length ? `, evidence ${listWords(e.data.evidence)}` : ''}`;
    case 'todo.cancelled':
      return `cancelled todo ${e.data.todoId}${why(e.data.reason)}`;
    case 'gate.requested': {
      const g = e.data.gate;
      const guards = g.guards.length ? ` guarding ${listWords(g.guards)}` : '';
      return `asked gate ${g.id} "${g.title}"${guards}${why(g.reason)}`;
    }
    case 'gate.approved':
      return `approved gate ${e.data.gateId}${why(e.data.note)}`;
    case 'gate.rejected': {
      const c = e.data.cancelled;
      return `rejected gate ${e.data.gateId}${c.length ? `, cancelling ${listWords(c)}` : ''}${why(e.data.note)}`;
    }
    case 'gate.expired':
      return `gate ${e.data.gateId} expired`;
    case 'evidence.added': {
      const v = e.data.evidence;
      const exit = v.exitCode !== undefined ? `exit ${v.exitCode}` : '';
      const took = v.durationMs !== undefined ? duration(v.durationMs / 1000) : '';
      const how = [exit, took].filter(Boolean).join(' after ');
      return `${v.kind} evidence ${v.id}${v.todoId ? ` for ${v.todoId}` : ''}${how ? ` (${how})` : ''}${why(v.summary)}`;
    }
    case 'run.started':
      return `opened run ${e.data.run.id} for ${e.data.run.agent}${e.data.run.contract ? ` with contract ${e.data.run.contract.id}` : ''}`;
    case 'run.spend': {
      const models = e.data.usage?.models ?? [];
      return `run ${e.data.runId} spent ${spendWords(e.data.spend)}${models.length ? ` (${listWords(models)})` : ''}`;
    }
    case 'run.ended': {
      const words = e.data.spend ? spendWords(e.data.spend) : 'nothing';
      const spent = words === 'nothing' ? '' : `, spent ${words}`;
      return `run ${e.data.runId} ended ${e.data.outcome}${spent}${why(e.data.summary)}`;
    }
    case 'agent.denied': {
      const d = e.data;
      const what =
        d.command !== undefined ? `$ ${d.command}` : `${d.tool}${d.path !== undefined ? ` ${d.path}` : ''}`;
      return `${d.enforced ? 'refused' : 'would refuse (observe mode)'} ${d.agent}: ${what} (${d.code})`;
    }
    case 'reward.added': {
      const r = e.data.reward;
      return `reward ${r.score > 0 ? '+' : ''}${r.score} for run ${r.runId}${why(r.comment)}`;
    }
    case 'quota.set': {
      const q = e.data.quota;
      const parts = [
        budgetsWords(q.budgets) || 'no budget',
        `cooldown ${q.cooldownSeconds ? duration(q.cooldownSeconds) : 'none'}`,
        q.window.kind === 'life'
          ? 'counted over the goal’s life'
          : `counted over the last ${q.window.hours} h`,
      ];
      return `set the quota: ${parts.join(', ')}`;
    }
    case 'quota.granted':
      return `granted ${budgetsWords(e.data.budgets) || 'nothing'} more${why(e.data.note)}`;
    case 'workflow.started': {
      const d = e.data;
      const params = Object.entries(d.params).map(([k, v]) => `${k}=${v}`);
      const declared = budgetsWords(d.quota);
      return `started workflow ${d.name} (${d.instanceId})${params.length ? ` with ${params.join(' ')}` : ''}: ${plural(d.todoIds.length, 'todo')}, ${plural(d.gateIds.length, 'gate')}${declared ? `, declares ${declared}` : ''}`;
    }
    case 'log.quarantined':
      return `moved an incomplete last line (${plural(e.data.bytes, 'byte')}) aside to ${e.data.file}`;
    case 'log.migrated':
      return `took over ${plural(e.data.events, 'event')} from events.jsonl`;
    default:
      return JSON.stringify((e as { data: unknown }).data);
  }
}

/** One event in words, on one line of at most `max` characters. */
export function eventWords(e: LoopxEvent, max = 160): string {
  return oneLine(sentence(e), max);
}
