/**
 * Passkeys at the status server: registering one through the link `loopx key passkey add` printed
 * (`/passkey/register?code=`, then `POST /passkey/register/options` and `/verify`), and signing in
 * with one (`POST /passkey/login/options` and `/verify`), which sets the session cookie (login.ts)
 * and remembers which passkey it was: only such a session may ask to sign a decision, in that
 * passkey's name (decide-routes.ts).
 *
 * The RP ID is the request's host name and the expected origin its own Origin (the request guard
 * checked it is this request's): a passkey is bound to the host name it was registered at.
 * Registration pins the key in the config folder and publishes it in `.loopx/approvers/`, as
 * `loopx key create` does.
 */
import type * as http from 'node:http';
import * as net from 'node:net';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from './webauthn';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from './webauthn';
import type { PublicKeyFile } from '../core/index';
import {
  fingerprint,
  forLogLine,
  isPasskey,
  keyIdOf,
  pinKey,
  pinnedKeys,
  publishKey,
  refused,
} from '../core/index';
import { answerPost, httpRefusal } from './json-body';
import type { Sessions } from './login';
import { SESSION_TTL_MS } from './login';
import { oneTime } from './one-time';
import { coseFromSpki, spkiFromCose } from './passkey-cose';
import type { PasskeyCodes } from './passkey-codes';
import { sendDecidePage } from './decide-page';
import { ownOrigin, requestHostName } from './request-guard';

export type PinnedPasskey = PublicKeyFile & { passkey: NonNullable<PublicKeyFile['passkey']> };

export const PASSKEY_POST_PATHS = [
  '/passkey/register/options',
  '/passkey/register/verify',
  '/passkey/login/options',
  '/passkey/login/verify',
] as const;

const CHALLENGE_TTL_MS = 5 * 60_000;
const MAX_PASSKEY_SESSIONS = 1_000;
const ALGS = [-8, -7, -257];

/** Where a browser call is made: its origin and RP ID, checked again when it is answered. */
export interface CallSite {
  origin: string;
  rpId: string;
}

/** The request's origin and RP ID, or why a passkey cannot be used here. */
export function callSite(req: http.IncomingMessage): CallSite {
  const origin = ownOrigin(req);
  const rpId = requestHostName(req);
  if (!origin)
    throw refused('a passkey call must come from this server’s own page', { reason: 'origin_required' });
  if (net.isIP(rpId) || rpId.startsWith('['))
    throw refused(
      `passkeys need a host name, not the address ${rpId}: open this page at localhost (the same port) instead`,
      { reason: 'passkey_needs_host_name' },
    );
  return { origin, rpId };
}

/** The passkeys pinned on this machine for host name `rpId`. */
export function pinnedPasskeys(configDir: string, rpId: string): PinnedPasskey[] {
  return pinnedKeys(configDir).filter((k): k is PinnedPasskey => isPasskey(k) && k.passkey.rpId === rpId);
}

/** Checks a WebAuthn response with the library, turning its failure into a refusal with a reason. */
export async function verifyAssertion(
  k: PinnedPasskey,
  response: AuthenticationResponseJSON,
  site: CallSite,
  expectedChallenge: string,
): Promise<void> {
  let ok = false;
  let why = 'it does not verify';
  try {
    const r = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: site.origin,
      expectedRPID: site.rpId,
      credential: {
        id: k.passkey.credentialId,
        publicKey: coseFromSpki(k.publicKey, k.passkey.alg),
        counter: 0,
      },
      requireUserVerification: true,
    });
    ok = r.verified && r.authenticationInfo.userVerified;
  } catch (e) {
    why = forLogLine((e as Error).message, 300);
  }
  if (!ok) throw refused(`the passkey’s answer was refused: ${why}`, { reason: 'passkey_not_verified' });
}

/** The response object a page posts, with the credential id it names. */
export function responseOf<T extends { id: string }>(body: Record<string, unknown>): T {
  const r = body.response as { id?: unknown } | undefined;
  if (!r || typeof r !== 'object' || typeof r.id !== 'string' || r.id.length > 1400)
    throw refused('the call carries no passkey response', { reason: 'passkey_response_missing' });
  return r as T;
}

export interface PasskeyRoutes {
  /** Answers `/passkey/*`; false for any other path. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): boolean;
  /** The passkey this request's session signed in with (still pinned, for its host name), if any. */
  signedIn(req: http.IncomingMessage): { key: PinnedPasskey; session: string } | undefined;
}

export function createPasskeyRoutes(o: {
  configDir: string;
  /** The workspace's `.loopx/`: a new passkey is published in its approvers/. */
  loopxRoot: string;
  sessions: Sessions;
  codes: PasskeyCodes;
  log: (line: string) => void;
}): PasskeyRoutes {
  const registrations = oneTime<CallSite & { challenge: string; name: string; nonce: string }>(
    CHALLENGE_TTL_MS,
  );
  const logins = oneTime<CallSite & { challenge: string }>(CHALLENGE_TTL_MS);
  const bySession = new Map<string, { keyId: string; exp: number }>();

  /** A new session signed in with passkey `keyId`: its Set-Cookie header. */
  function signIn(keyId: string): Record<string, string> {
    const id = o.sessions.create();
    const now = Date.now();
    for (const [s, v] of bySession) if (v.exp <= now) bySession.delete(s);
    while (bySession.size >= MAX_PASSKEY_SESSIONS) bySession.delete(bySession.keys().next().value as string);
    bySession.set(id, { keyId, exp: now + SESSION_TTL_MS });
    return { 'Set-Cookie': o.sessions.setCookie(id) };
  }

  function checkCode(code: unknown) {
    const c = o.codes.check(code);
    if ('refusal' in c) {
      o.log(`passkey registration refused: ${c.refusal}`);
      throw httpRefusal(
        401,
        c.refusal,
        c.refusal === 'passkey_code_used'
          ? 'this registration link was already used (or made before the status server last started): each link works once. Get a new one with `loopx key passkey add`.'
          : c.refusal === 'passkey_code_expired'
            ? 'this registration link has expired (it works for 10 minutes). Get a new one with `loopx key passkey add`.'
            : 'this registration link is not valid here. Get one with `loopx key passkey add` in a terminal.',
      );
    }
    return c;
  }

  async function registerOptions(req: http.IncomingMessage, body: Record<string, unknown>) {
    const site = callSite(req);
    const { name, nonce } = checkCode(body.code);
    const options = await generateRegistrationOptions({
      rpName: 'LoopX',
      rpID: site.rpId,
      userName: name,
      userDisplayName: name,
      attestationType: 'none',
      excludeCredentials: pinnedPasskeys(o.configDir, site.rpId).map((k) => ({ id: k.passkey.credentialId })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      supportedAlgorithmIDs: ALGS,
      timeout: CHALLENGE_TTL_MS,
    });
    const id = registrations.put({ ...site, challenge: options.challenge, name, nonce });
    return { body: { id, name, options } };
  }

  async function registerVerify(req: http.IncomingMessage, body: Record<string, unknown>) {
    const site = callSite(req);
    const pending = registrations.take(body.id);
    if (!pending)
      throw httpRefusal(
        410,
        'passkey_challenge_spent',
        'this registration was already answered or has expired: open the link again',
      );
    // Spent by its first answer, whatever comes of it: a link registers one passkey at most.
    const c = checkCode(body.code);
    if (c.nonce !== pending.nonce)
      throw httpRefusal(401, 'passkey_code_invalid', 'the registration link does not match');
    o.codes.spend(c.nonce);
    if (site.origin !== pending.origin || site.rpId !== pending.rpId)
      throw refused('the registration was answered from another origin than it was asked from', {
        reason: 'origin_required',
      });
    let info: Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo'];
    try {
      const r = await verifyRegistrationResponse({
        response: responseOf<RegistrationResponseJSON>(body),
        expectedChallenge: pending.challenge,
        expectedOrigin: site.origin,
        expectedRPID: site.rpId,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGS,
      });
      info = r.verified && r.registrationInfo?.userVerified ? r.registrationInfo : undefined;
    } catch (e) {
      throw refused(`the passkey was not registered: ${forLogLine((e as Error).message, 300)}`, {
        reason: 'passkey_not_verified',
      });
    }
    if (!info)
      throw refused('the passkey was not registered: it did not verify the person', {
        reason: 'passkey_not_verified',
      });
    const { pem, alg } = spkiFromCose(info.credential.publicKey);
    const key: PinnedPasskey = {
      v: 1,
      keyId: keyIdOf(pem),
      name: pending.name,
      publicKey: pem,
      createdAt: new Date().toISOString(),
      passkey: { credentialId: info.credential.id, rpId: site.rpId, alg },
    };
    pinKey(o.configDir, key);
    publishKey(o.loopxRoot, key);
    o.log(`passkey ${fingerprint(key.keyId)} registered at ${site.rpId}`);
    return {
      body: { key_id: key.keyId, fingerprint: fingerprint(key.keyId), name: key.name, rp_id: site.rpId },
      headers: signIn(key.keyId),
    };
  }

  async function loginOptions(req: http.IncomingMessage) {
    const site = callSite(req);
    const keys = pinnedPasskeys(o.configDir, site.rpId);
    if (keys.length === 0)
      throw refused(
        `no passkey is pinned on this machine for ${site.rpId}: add one with \`loopx key passkey add\` in a terminal`,
        { reason: 'no_passkey' },
      );
    const options = await generateAuthenticationOptions({
      rpID: site.rpId,
      allowCredentials: keys.map((k) => ({ id: k.passkey.credentialId })),
      userVerification: 'required',
      timeout: CHALLENGE_TTL_MS,
    });
    return { body: { id: logins.put({ ...site, challenge: options.challenge }), options } };
  }

  async function loginVerify(req: http.IncomingMessage, body: Record<string, unknown>) {
    const site = callSite(req);
    const pending = logins.take(body.id);
    if (!pending)
      throw httpRefusal(
        410,
        'passkey_challenge_spent',
        'this sign-in was already answered or has expired: sign in again',
      );
    const response = responseOf<AuthenticationResponseJSON>(body);
    const key = pinnedPasskeys(o.configDir, site.rpId).find((k) => k.passkey.credentialId === response.id);
    if (!key || site.origin !== pending.origin)
      throw refused('that passkey is not pinned on this machine for this site', {
        reason: 'passkey_not_pinned',
      });
    await verifyAssertion(key, response, site, pending.challenge);
    return { body: { name: key.name, key_id: key.keyId }, headers: signIn(key.keyId) };
  }

  return {
    handle(req, res, pathname) {
      if (pathname === '/passkey/register') {
        sendDecidePage(res, 'register', '../');
        return true;
      }
      const post: Record<
        string,
        (body: Record<string, unknown>) => Promise<{ body: unknown; headers?: Record<string, string> }>
      > = {
        '/passkey/register/options': (b) => registerOptions(req, b),
        '/passkey/register/verify': (b) => registerVerify(req, b),
        '/passkey/login/options': () => loginOptions(req),
        '/passkey/login/verify': (b) => loginVerify(req, b),
      };
      const fn = Object.hasOwn(post, pathname) ? post[pathname] : undefined;
      if (!fn) return false;
      answerPost(req, res, fn);
      return true;
    },
    signedIn(req) {
      const session = o.sessions.fromCookieHeader(req.headers.cookie);
      if (!session || !o.sessions.valid(session)) return undefined;
      const s = bySession.get(session);
      if (!s || s.exp <= Date.now()) return undefined;
      const key = pinnedPasskeys(o.configDir, requestHostName(req)).find((k) => k.keyId === s.keyId);
      return key && { key, session };
    },
  };
}
