/**
 * What lets `exec` authorise a command from the goal's snapshot instead of replaying every log.
 *
 * The snapshot is MAC'd with a key an agent running as the same user can read, and the logs are
 * exactly as writable: neither proves anything an agent could not have written itself, except a
 * person's signature. So what a command needs from the logs is the signed approval of each gate
 * it needs, not every other event re-validated. A gate's approval is proven here only in the
 * plain case: the gate was requested, then decided once, by this approval, which nothing came
 * after; it verifies against a pinned key for this workspace, was made on no earlier decision
 * (`basis`), sorts after the goal's creation and not ahead of the clock, and lists this todo with
 * this very command. Anything else (a second decision, a request after the approval, an older
 * LoopX's log, a line that does not parse) proves nothing: the caller replays the logs, whose
 * answer stands (test/security/forged-snapshot.test.ts).
 */
import type { Gate, LoopxEvent, Policy, Todo } from '../model';
import { aheadCutoff, safeParseEvent } from '../model';
import type { MergedEvent } from '../rules';
import { byMergeOrder, gatesFor } from '../rules';
import type { Store } from '../store';
import { readStoreFile } from '../store';

/** The gate a gate event is about (undefined for any other event). */
function gateOf(ev: LoopxEvent): string | undefined {
  switch (ev.type) {
    case 'gate.requested':
      return ev.data.gate.id;
    case 'gate.approved':
    case 'gate.rejected':
    case 'gate.expired':
      return ev.data.gateId;
    default:
      return undefined;
  }
}

/**
 * The events of `gates` and the goal's creation in every log of `goalId`; undefined when a line
 * among them cannot be read as this version writes it (the replay then says what is wrong).
 */
function gateEvents(store: Store, goalId: string, gates: ReadonlySet<string>): MergedEvent[] | undefined {
  const out: MergedEvent[] = [];
  for (const log of store.logFiles(goalId)) {
    const text = readStoreFile(log.file, 'utf8');
    let at = 0;
    while (at < text.length) {
      const nl = text.indexOf('\n', at);
      if (nl === -1) break;
      const line = text.slice(at, nl);
      at = nl + 1;
      // Only lines that can be a gate event or the creation are parsed.
      if (!line.includes('"type":"gate.') && !line.includes('"type":"goal.created"')) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        return undefined;
      }
      const type = (raw as { type?: unknown }).type;
      if (typeof type !== 'string' || (type !== 'goal.created' && !type.startsWith('gate.'))) continue;
      const parsed = safeParseEvent(raw);
      if (!parsed.success) return undefined;
      const ev = parsed.data as LoopxEvent;
      const gate = gateOf(ev);
      if (ev.type !== 'goal.created' && (gate === undefined || !gates.has(gate))) continue;
      if (ev.v !== 2 || ev.hlc === undefined || ev.writer !== log.name) return undefined;
      out.push({ ev, key: ev.hlc, log: log.name });
    }
  }
  return out.sort(byMergeOrder);
}

/**
 * Whether every gate `todo` needs for `command` is approved by a person's signature in the goal's
 * logs, in the plain case the module comment describes. False means "replay to know", never
 * "refused".
 */
export function approvalsProven(
  store: Store,
  goalId: string,
  todo: Todo,
  command: string,
  policy: Policy,
  gates: readonly Gate[],
  now: Date,
): boolean {
  const needed = gatesFor(todo, policy, gates);
  if (needed.length === 0) return true;
  const found = gateEvents(store, goalId, new Set(needed.map((n) => n.id)));
  if (!found) return false;
  const created = found.find((f) => f.ev.type === 'goal.created');
  if (!created) return false;
  const trust = store.trust();
  const cutoff = aheadCutoff(now);
  return needed.every(({ id }) => {
    const mine = found.filter((f) => gateOf(f.ev) === id);
    const last = mine.at(-1);
    const gate = gates.find((g) => g.id === id);
    if (!last || !gate || last.ev.type !== 'gate.approved' || last.ev.id !== gate.lastDecision) return false;
    const approval = last.ev;
    const before = mine.slice(0, -1);
    if (!before.length || before.some((f) => f.ev.type !== 'gate.requested' || f.key <= created.key))
      return false;
    if (approval.data.basis != null) return false;
    if (last.key <= created.key || last.key > cutoff) return false;
    const covers = (approval.data.guarded ?? []).some(
      (w) => w.todoId === todo.id && w.action === command && todo.action === command,
    );
    return covers && trust.rejects({ goalId, ...approval }, approval.sig) === undefined;
  });
}
