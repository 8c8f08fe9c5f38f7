/**
 * Signing in and signing a decision with the person's passkey, shared by the decision pages
 * (main.ts, reward.ts): the server fixes the decision and answers the WebAuthn request, the
 * passkey signs it in the browser, and a failure says what to do next.
 */
import { startAuthentication } from '@simplewebauthn/browser';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { ApiError, getOwnJson, postJson, problemText } from './api';
import { el, message, setWho, show } from './dom';

/** Signs in with a passkey (an assertion over a random challenge), which sets the session cookie. */
async function signIn(): Promise<void> {
  const o = await postJson<{ id: string; options: PublicKeyCredentialRequestOptionsJSON }>(
    'passkey/login/options',
    {},
  );
  const response = await startAuthentication({ optionsJSON: o.options });
  await postJson('passkey/login/verify', { id: o.id, response });
  location.reload();
}

export function signInBlock(why: string): HTMLElement {
  const out = el('div', { class: 'signin' });
  const button = el('button', { class: 'approve', text: 'Sign in with your passkey' });
  button.addEventListener('click', () => {
    button.disabled = true;
    signIn().catch((e: unknown) => {
      button.disabled = false;
      out.append(message(problemText(e), 'error'));
    });
  });
  out.append(el('p', { text: why }), button);
  return out;
}

/**
 * The page's document as the signed-in person reads it, with who that is shown; undefined when
 * there is no session, once the page offers to sign in, saying `why`.
 */
export async function signedInDoc<T extends { signed_in: { name: string } | null }>(
  why: string,
): Promise<T | undefined> {
  let doc: T;
  try {
    doc = await getOwnJson<T>();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      show(signInBlock(why));
      return undefined;
    }
    throw e;
  }
  setWho(doc.signed_in?.name);
  return doc;
}

/** Signs one decision: the server fixes it and answers the passkey request, the passkey signs it. */
export async function signDecision<T>(ask: Record<string, unknown>): Promise<T> {
  const o = await postJson<{ id: string; options: PublicKeyCredentialRequestOptionsJSON }>(
    'decide/options',
    ask,
  );
  const response = await startAuthentication({ optionsJSON: o.options });
  return postJson<T>('decide/commit', { id: o.id, response });
}

/** A failed decision's message; when the goal changed, the person looks again before anything else. */
export function failed(status: HTMLElement, buttons: HTMLButtonElement[], e: unknown): void {
  const stale = e instanceof ApiError && e.reason === 'decision_stale';
  for (const b of buttons) b.disabled = stale;
  const again = el('button', { text: 'Look again' });
  again.addEventListener('click', () => location.reload());
  status.replaceChildren(message(problemText(e), 'error'), ...(stale ? [again] : []));
}
