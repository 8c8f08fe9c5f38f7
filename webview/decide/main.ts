/**
 * The script of the status server's decision pages (src/server/decide-page.ts): the list of gates
 * waiting for the person, one gate with its facts and Approve / Reject, a goal's budgets with
 * Grant, a goal's ended runs with Record reward (reward.ts), and registering a passkey through a
 * one-time link. Each decision is signed by the person's passkey, in the browser, over
 * the exact event the server prepared (its challenge is that event's statement's sha256).
 */
import { startRegistration } from '@simplewebauthn/browser';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { base, page, postJson, problemText } from './api';
import { addressNotice, app, atAddress, el, message, setWho, show } from './dom';
import { rewardPage } from './reward';
import { failed, signDecision, signedInDoc, signInBlock } from './sign';

interface Signed {
  signed_in: { name: string } | null;
}
interface ListDoc extends Signed {
  items: {
    kind: 'gate' | 'quota';
    href: string;
    rewards_href: string;
    workspace: string;
    goal_id: string;
    goal_title: string;
    id: string;
    title: string;
    detail: string;
    requested_by: string | null;
    commands: string[];
  }[];
  problems: string[];
}
interface GrantDoc extends Signed {
  workspace: { id: string; name: string };
  goal: { id: string; title: string; status: string };
  budgets: { name: string; label: string; used: number; limit: number; left: number }[];
  shown: string;
}
interface GateDoc extends Signed {
  workspace: { id: string; name: string };
  goal: { id: string; title: string };
  gate: { id: string; title: string; status: string; awaits_decision: boolean };
  approve_text: string;
  reject_text: string;
  shown: string;
}

async function listPage(): Promise<void> {
  const doc = await signedInDoc<ListDoc>('Sign in with your passkey to see the decisions waiting for you.');
  if (!doc) return;
  const items = el('ul', { class: 'items' });
  for (const i of doc.items) {
    const link = el('a', { href: base + i.href, text: i.title });
    items.append(
      el('li', {}, [
        link,
        el('div', {
          class: 'muted',
          text: `${i.kind === 'gate' ? `gate ${i.id}` : i.detail} · ${i.workspace} · goal ${i.goal_id} (${i.goal_title})${i.requested_by ? ` · asked by ${i.requested_by}` : ''}`,
        }),
        ...i.commands.map((c) => el('code', { text: `$ ${c}` })),
        el('div', {}, [el('a', { href: base + i.rewards_href, text: 'Rewards' })]),
      ]),
    );
  }
  show(
    el('h2', { text: 'Decisions waiting for you' }),
    ...(doc.signed_in ? [] : [signInBlock('To decide, sign in with your passkey.')]),
    doc.items.length ? items : el('p', { class: 'muted', text: 'Nothing waits for a decision.' }),
    ...doc.problems.map((p) => message(p, 'error')),
  );
}

/** The gate's place, from this page's own path: /decide/<workspace>/<goal>/<gate>. */
function gatePath(): { workspace: string; goal: string; gate: string } {
  const [workspace = '', goal = '', gate = ''] = location.pathname
    .split('/')
    .slice(-3)
    .map(decodeURIComponent);
  return { workspace, goal, gate };
}

async function decide(doc: GateDoc, decision: 'approve' | 'reject', note: string): Promise<string> {
  const r = await signDecision<{ gate_status: string }>({ ...gatePath(), decision, note, shown: doc.shown });
  return r.gate_status;
}

async function gatePage(): Promise<void> {
  const doc = await signedInDoc<GateDoc>('Sign in with your passkey to see this gate and decide on it.');
  if (!doc) return;
  const head = [
    el('h2', { text: doc.gate.title }),
    el('p', {
      class: 'muted',
      text: `gate ${doc.gate.id} · ${doc.gate.status} · ${doc.workspace.name} · goal ${doc.goal.id} (${doc.goal.title})`,
    }),
    el('pre', { class: 'facts', text: doc.approve_text }),
    el('details', {}, [
      el('summary', { text: 'What rejecting does' }),
      el('pre', { class: 'facts', text: doc.reject_text }),
    ]),
  ];
  if (!doc.gate.awaits_decision)
    return show(...head, message(`Gate ${doc.gate.id} is ${doc.gate.status}: it waits for no decision.`));
  if (!doc.signed_in)
    return show(
      ...head,
      signInBlock('To decide, sign in with your passkey: the decision is signed with it.'),
    );
  const note = el('textarea', {});
  note.id = 'note';
  note.maxLength = 2000;
  const approve = el('button', { class: 'approve', text: 'Approve' });
  const reject = el('button', { class: 'reject', text: 'Reject' });
  const status = el('div', {});
  const act = (decision: 'approve' | 'reject') => {
    approve.disabled = reject.disabled = true;
    status.replaceChildren(message('Confirm with your passkey…'));
    decide(doc, decision, note.value).then(
      (s) =>
        status.replaceChildren(
          message(
            `${decision === 'approve' ? 'Approved' : 'Rejected'}: gate ${doc.gate.id} is ${s}, signed with your passkey ${doc.signed_in!.name}.`,
            'done',
          ),
        ),
      (e: unknown) => failed(status, [approve, reject], e),
    );
  };
  approve.addEventListener('click', () => act('approve'));
  reject.addEventListener('click', () => act('reject'));
  const label = el('label', { text: 'Note (optional)' });
  label.setAttribute('for', 'note');
  show(...head, label, note, el('div', { class: 'actions' }, [approve, reject]), status);
}

async function grantPage(): Promise<void> {
  const doc = await signedInDoc<GrantDoc>(
    'Sign in with your passkey to see this goal’s budgets and grant more.',
  );
  if (!doc) return;
  const use = doc.budgets.map((b) => `${b.label}: ${b.used} used of ${b.limit} (${b.left} left)`).join('\n');
  const head = [
    el('h2', { text: `Grant budget to goal ${doc.goal.id}` }),
    el('p', { class: 'muted', text: `${doc.goal.title} · ${doc.goal.status} · ${doc.workspace.name}` }),
    el('pre', { class: 'facts', text: use || 'This goal sets no budget.' }),
  ];
  if (!doc.signed_in)
    return show(...head, signInBlock('To grant, sign in with your passkey: the grant is signed with it.'));
  const inputs = doc.budgets.map((b) => {
    const input = el('input', {});
    input.type = 'number';
    input.min = '0';
    input.id = `grant-${b.name}`;
    const label = el('label', { text: `Add ${b.label}` });
    label.setAttribute('for', input.id);
    return { name: b.name, input, nodes: [label, input] };
  });
  const note = el('textarea', {});
  note.id = 'note';
  const noteLabel = el('label', { text: 'Note (optional)' });
  noteLabel.setAttribute('for', 'note');
  const grant = el('button', { class: 'approve', text: 'Grant' });
  const status = el('div', {});
  grant.addEventListener('click', () => {
    const budgets: Record<string, number> = {};
    for (const i of inputs) if (i.input.value !== '') budgets[i.name] = Number(i.input.value);
    grant.disabled = true;
    status.replaceChildren(message('Confirm with your passkey…'));
    const ask = {
      decision: 'grant',
      workspace: doc.workspace.id,
      goal: doc.goal.id,
      budgets,
      note: note.value,
      shown: doc.shown,
    };
    signDecision<{ quota: Record<string, { used: number; limit: number }> }>(ask).then(
      (r) => {
        const now = Object.entries(r.quota)
          .map(([k, u]) => `${k} ${u.used} of ${u.limit}`)
          .join(', ');
        status.replaceChildren(
          message(`Granted, signed with your passkey ${doc.signed_in!.name}: now ${now}.`, 'done'),
        );
      },
      (e: unknown) => failed(status, [grant], e),
    );
  });
  show(
    ...head,
    ...inputs.flatMap((i) => i.nodes),
    noteLabel,
    note,
    el('div', { class: 'actions' }, [grant]),
    status,
  );
}

async function registerPage(): Promise<void> {
  const code = new URLSearchParams(location.search).get('code') ?? '';
  const status = el('div', {});
  const button = el('button', { class: 'approve', text: 'Create the passkey' });
  button.addEventListener('click', () => {
    button.disabled = true;
    status.replaceChildren(message('Follow your browser’s prompt…'));
    (async () => {
      const o = await postJson<{ id: string; name: string; options: PublicKeyCredentialCreationOptionsJSON }>(
        'passkey/register/options',
        { code },
      );
      const response = await startRegistration({ optionsJSON: o.options });
      const r = await postJson<{ name: string; fingerprint: string }>('passkey/register/verify', {
        id: o.id,
        code,
        response,
      });
      // The link is spent: it leaves the address bar and the history entry.
      history.replaceState(null, '', location.pathname);
      setWho(r.name);
      status.replaceChildren(
        message(
          `Passkey ${r.name} (${r.fingerprint}) is pinned on this machine: your decisions signed with it count.`,
          'done',
        ),
        el('p', {}, [el('a', { href: '../decide', text: 'Decisions waiting for you' })]),
      );
    })().catch((e: unknown) => {
      button.disabled = false;
      status.replaceChildren(message(problemText(e), 'error'));
    });
  });
  show(
    el('h2', { text: 'Add a passkey for your LoopX decisions' }),
    el('p', {
      text: 'Your browser will ask you to create a passkey and to verify it is you (fingerprint, face, PIN). It is bound to this host name: open decisions at the same one.',
    }),
    button,
    status,
  );
}

function start(): void {
  if (atAddress()) return show(addressNotice());
  const pages: Record<string, () => Promise<void>> = {
    gate: gatePage,
    grant: grantPage,
    reward: rewardPage,
    register: registerPage,
  };
  const run = pages[page] ?? listPage;
  run().catch((e: unknown) => app.replaceChildren(message(problemText(e), 'error')));
}

start();
