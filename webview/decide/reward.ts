/**
 * The reward page (`/reward/<workspace>/<goal>`): the goal's runs that ended, newest first, each
 * with its summary, evidence and the rewards already recorded on it, and a score, a comment and
 * Record reward. A reward is a person's decision like a grant: the server fixes the `reward.add`
 * event, the passkey signs it (sign.ts). Each run carries its own `shown`, so a run rewarded by
 * someone else meanwhile is looked at again, while other runs ending does not stop this one.
 */
import { el, message, show } from './dom';
import { failed, signDecision, signedInDoc, signInBlock } from './sign';

interface RunShown {
  id: string;
  agent: string;
  outcome: string | null;
  started_at: string;
  ended_at: string | null;
  summary: string | null;
  /** How many evidence records the run has (`loopx run show` lists them). */
  evidence: number;
  rewards: {
    id: string;
    score: number;
    comment: string;
    lesson?: string;
    at: string;
    by: string;
    via: string;
  }[];
  shown: string;
}
interface RewardDoc {
  signed_in: { name: string } | null;
  workspace: { id: string; name: string };
  goal: { id: string; title: string; status: string };
  score_min: number | null;
  score_max: number | null;
  comment_max: number | null;
  runs_ended: number;
  runs: RunShown[];
}

/** The scores the capability takes, as its input schema says (`-1 to 1`). */
function scoreRange(doc: RewardDoc): string {
  return doc.score_min !== null && doc.score_max !== null ? `${doc.score_min} to ${doc.score_max}` : '';
}

/** What a run did, as text: the facts a person scores it on. */
function runFacts(r: RunShown): HTMLElement[] {
  const plural = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  const k = r.rewards.length;
  const out: HTMLElement[] = [
    el('pre', { class: 'facts', text: r.summary ?? 'No summary.' }),
    el('div', {
      class: 'muted',
      text: `${plural(r.evidence, 'evidence record')} · ${k ? `${plural(k, 'reward')}:` : 'no reward yet'}`,
    }),
  ];
  if (k)
    out.push(
      el(
        'ul',
        { class: 'rewarded' },
        r.rewards.map((w) =>
          el('li', {
            text: `${w.score} by ${w.by} via ${w.via}, ${w.at}${w.comment ? `: ${w.comment}` : ''}`,
          }),
        ),
      ),
    );
  return out;
}

/** A run's score, comment and Record reward; `done` is the message of a reward just recorded. */
function rewardForm(doc: RewardDoc, r: RunShown, done?: string): HTMLElement[] {
  const score = el('input', {});
  score.type = 'number';
  score.id = `score-${r.id}`;
  if (doc.score_min !== null) score.min = String(doc.score_min);
  if (doc.score_max !== null) score.max = String(doc.score_max);
  score.step = '0.1';
  const scoreLabel = el('label', { text: `Score${scoreRange(doc) ? ` (${scoreRange(doc)})` : ''}` });
  scoreLabel.setAttribute('for', score.id);
  const comment = el('textarea', {});
  comment.id = `comment-${r.id}`;
  if (doc.comment_max !== null) comment.maxLength = doc.comment_max;
  const commentLabel = el('label', { text: 'Comment (optional)' });
  commentLabel.setAttribute('for', comment.id);
  const record = el('button', { class: 'approve', text: 'Record reward' });
  const status = el('div', {}, done ? [message(done, 'done')] : []);
  record.addEventListener('click', () => {
    record.disabled = true;
    status.replaceChildren(message('Confirm with your passkey…'));
    const ask = {
      decision: 'reward',
      workspace: doc.workspace.id,
      goal: doc.goal.id,
      run: r.id,
      // Left empty, no score is sent: the capability says it is needed, not a made-up 0.
      score: score.value === '' ? undefined : Number(score.value),
      comment: comment.value,
      shown: r.shown,
    };
    signDecision<{ event_id: string }>(ask).then(
      () => {
        const text = `Recorded: score ${ask.score} on run ${r.id}, signed with your passkey ${doc.signed_in!.name}.`;
        // Shown again from the server: the run now lists the reward, and its `shown` is new.
        rewardPage({ run: r.id, text }).catch((e: unknown) =>
          status.replaceChildren(message(String(e), 'error')),
        );
      },
      (e: unknown) => failed(status, [record], e),
    );
  });
  return [
    el('div', { class: 'row' }, [el('div', {}, [scoreLabel, score])]),
    commentLabel,
    comment,
    el('div', { class: 'actions' }, [record]),
    status,
  ];
}

export async function rewardPage(done?: { run: string; text: string }): Promise<void> {
  const doc = await signedInDoc<RewardDoc>(
    'Sign in with your passkey to see this goal’s runs and reward them.',
  );
  if (!doc) return;
  const more =
    doc.runs_ended > doc.runs.length ? ` (the ${doc.runs.length} newest of ${doc.runs_ended})` : '';
  const head = [
    el('h2', { text: `Record a reward on a run of goal ${doc.goal.id}` }),
    el('p', { class: 'muted', text: `${doc.goal.title} · ${doc.goal.status} · ${doc.workspace.name}` }),
    el('p', {
      text: `Score a run that ended${scoreRange(doc) ? ` from ${scoreRange(doc)}` : ''} and say why${more}. The reward is signed with your passkey.`,
    }),
  ];
  if (!doc.runs.length) return show(...head, message('No run of this goal has ended yet.'));
  const runs = el('ul', { class: 'items' });
  for (const r of doc.runs) {
    const li = el('li', {}, [
      el('strong', { text: r.id }),
      el('div', {
        class: 'muted',
        text: `${r.agent} · ${r.outcome ?? 'ended'} · ended ${r.ended_at ?? ''}`,
      }),
      ...runFacts(r),
      ...(doc.signed_in ? rewardForm(doc, r, done?.run === r.id ? done.text : undefined) : []),
    ]);
    li.dataset.run = r.id;
    runs.append(li);
  }
  show(
    ...head,
    ...(doc.signed_in
      ? []
      : [signInBlock('To record a reward, sign in with your passkey: it is signed with it.')]),
    runs,
  );
}
