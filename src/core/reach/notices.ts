/**
 * What is worth telling the person outside the editor, from the machine-wide queue
 * (needs-you.ts): a gate waiting for a decision, a lane of `loopx drive` that only a person can
 * move on, a budget used up. The rest of the queue (todos for a person, refusals, goals without a
 * plan) waits for the person's next look; it does not wake anyone.
 *
 * Pure: the queue in, the notices out. Each notice has a key that stays the same while the thing
 * it tells stays the same, and changes when it happens again, so the outbox sends each once.
 */
import { sha256 } from '../store';
import type { NeedsYouDoc, NeedsYouItem } from '../views';

export type NoticeKind = 'gate' | 'lane' | 'quota' | 'test';

export interface Notice {
  /** `<kind>-<40 hex>`: a file name in the outbox. */
  key: string;
  kind: NoticeKind;
  workspace: { name: string; path: string };
  goal: { id: string; title: string };
  /** The gate's id, the lane's name or the budget's name. */
  id: string;
  title: string;
  detail: string;
  /** Gates: who asked, in words (`agent codex at the command line (unsigned)`). */
  requested_by?: string;
  /** Gates: every command the gate lets run, whole. */
  commands?: string[];
  /** Where the person decides (a gate) or sees the whole queue. */
  link: string;
  /** When it was asked (a gate), else when the queue was read. */
  at: string;
}

export interface NoticeOptions {
  /** The status server's address (channels.json `link_base`). */
  linkBase: string;
}

/** Only a spent budget is news; one nearly spent is shown where the person looks anyway. */
const USED_UP = / budget used up$/;

function isNotice(item: NeedsYouItem): boolean {
  if (item.kind === 'gate' || item.kind === 'lane') return true;
  return item.kind === 'quota' && USED_UP.test(item.title);
}

/**
 * The key of a notice. A gate asked again has another `requested_at`; a lane stopped again for
 * another reason has another `detail`; a budget used up again after a grant has another limit in
 * its `detail`. The workspace is in each, so two workspaces with the same goal ids never share one.
 */
export function noticeKey(
  item: Pick<NeedsYouItem, 'kind' | 'workspace' | 'goal_id' | 'id' | 'detail' | 'requested_at'>,
): string {
  const where = sha256(item.workspace.path);
  const parts =
    item.kind === 'gate'
      ? [where, item.goal_id, item.id, item.requested_at ?? '']
      : item.kind === 'lane'
        ? [where, item.id, sha256(item.detail)]
        : [where, item.goal_id, item.id, item.detail];
  return `${item.kind}-${sha256(JSON.stringify([item.kind, ...parts])).slice(0, 40)}`;
}

/** The page a notice links to: the gate's decide page, or every workspace's queue. */
export function noticeLink(
  linkBase: string,
  item: { kind: string; goal_id: string; id: string },
  workspaceId: string,
): string {
  const base = linkBase.replace(/\/+$/, '');
  if (item.kind !== 'gate') return `${base}/all`;
  return `${base}/decide/${workspaceId}/${encodeURIComponent(item.goal_id)}/${encodeURIComponent(item.id)}`;
}

/** The notices of a queue, in its order (gates first). */
export function noticesFrom(doc: NeedsYouDoc, o: NoticeOptions): Notice[] {
  return doc.items.filter(isNotice).map((item) => ({
    key: noticeKey(item),
    kind: item.kind as NoticeKind,
    workspace: { name: item.workspace.name, path: item.workspace.path },
    goal: { id: item.goal_id, title: item.goal_title },
    id: item.id,
    title: item.title,
    detail: item.detail,
    ...(item.requested_by !== undefined ? { requested_by: item.requested_by } : {}),
    ...(item.commands !== undefined ? { commands: [...item.commands] } : {}),
    link: noticeLink(o.linkBase, item, item.workspace.key),
    at: item.requested_at ?? doc.generated_at,
  }));
}

/** The notice `loopx notify test` sends: LoopX's own words, no store text. */
export function testNotice(o: {
  linkBase: string;
  now: Date;
  where: { name: string; path: string };
}): Notice {
  const at = o.now.toISOString();
  return {
    key: `test-${sha256(at).slice(0, 40)}`,
    kind: 'test',
    workspace: o.where,
    goal: { id: 'test', title: 'LoopX test notice' },
    id: 'test',
    title: 'LoopX test notice',
    detail: 'If you read this, LoopX can reach you here when a gate, a lane or a budget needs you.',
    link: noticeLink(o.linkBase, { kind: 'test', goal_id: 'test', id: 'test' }, ''),
    at,
  };
}
