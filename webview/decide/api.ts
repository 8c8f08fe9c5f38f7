/**
 * How the decision pages talk to the status server: JSON GETs of the page's own URL and JSON POSTs
 * to the decision and passkey endpoints, every URL relative to the server's root (`data-base`),
 * errors carried as their reason code for the page to branch on.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const app = document.getElementById('app') as HTMLElement;
/** The relative way back to the server's root from this page (`./`, `../`, `../../../`). */
export const base = app.dataset.base ?? './';
export const page = app.dataset.page ?? 'list';

async function answer<T>(r: Response): Promise<T> {
  let body: unknown;
  try {
    body = await r.json();
  } catch {
    body = undefined;
  }
  if (!r.ok) {
    const e = (body as { error?: { reason?: string; message?: string } } | undefined)?.error;
    throw new ApiError(r.status, e?.reason ?? 'http_error', e?.message ?? `the server answered ${r.status}`);
  }
  return body as T;
}

/** This page's data: its own URL asked for as JSON. */
export async function getOwnJson<T>(): Promise<T> {
  return answer<T>(
    await fetch(location.pathname, { headers: { Accept: 'application/json' }, credentials: 'same-origin' }),
  );
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(
    await fetch(base + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    }),
  );
}

/** A person's words for what went wrong: the reason code decides, the server's message says more. */
export function problemText(e: unknown): string {
  if (e instanceof ApiError) {
    switch (e.reason) {
      case 'decision_stale':
        return 'The goal changed while you decided; look again. Nothing was signed into it.';
      case 'decision_challenge_spent':
        return 'This decision was already sent or has expired; decide again.';
      case 'passkey_sign_in':
      case 'unauthorized':
        return 'Sign in with your passkey first.';
      default:
        return e.message;
    }
  }
  const name = (e as { name?: string } | undefined)?.name;
  if (name === 'NotAllowedError' || name === 'AbortError')
    return 'The passkey was not used (cancelled, timed out, or it could not verify you). Nothing was decided.';
  return e instanceof Error ? e.message : String(e);
}
