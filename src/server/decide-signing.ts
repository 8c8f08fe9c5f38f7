/**
 * Signing a person's decision with their passkey, in two calls (decide-routes.ts says which
 * decisions): `ask` fixes the decision's event (capabilities `prepareCall`, store/prepared-event.ts)
 * and keeps it under a one-time id for 5 minutes, answering the WebAuthn request whose challenge is
 * the sha256 of the event's statement; `commit` spends that id, checks the assertion with the
 * library and then with the core's own rule (the one replay applies on every clone), and writes
 * exactly the prepared event, or nothing.
 */
import type * as http from 'node:http';
import type { Actor, PreparedCall, Store } from '../core/index';
import {
  commitPreparedCall,
  decisionStatement,
  forLogLine,
  passkeyChallenge,
  prepareCall,
  quotaUse,
  refused,
} from '../core/index';
import { httpRefusal } from './json-body';
import { oneTime } from './one-time';
import type { CallSite, PasskeyRoutes } from './passkey-routes';
import { callSite, responseOf, verifyAssertion } from './passkey-routes';
import type { AuthenticationResponseJSON } from './webauthn';
import { generateAuthenticationOptions } from './webauthn';

const CHALLENGE_TTL_MS = 5 * 60_000;

interface PendingDecision extends CallSite {
  prepared: PreparedCall;
  statement: string;
  challenge: string;
  workspace: string;
  keyId: string;
  session: string;
}

type Answer = Promise<{ body: unknown }>;

export interface DecisionSigning {
  /** Fixes the decision `capability` with `input` makes in `store` and asks the passkey to sign it. */
  ask(req: http.IncomingMessage, workspace: string, store: Store, capability: string, input: unknown): Answer;
  /** Writes the decision `body.id` names with the passkey's answer `body.response`. */
  commit(req: http.IncomingMessage, body: Record<string, unknown>): Answer;
}

/** The passkey this request's session signed in with: only such a session may ask to sign. */
export function signedInOrRefuse(passkeys: PasskeyRoutes, req: http.IncomingMessage) {
  const signed = passkeys.signedIn(req);
  if (!signed)
    throw httpRefusal(
      401,
      'passkey_sign_in',
      'sign in with your passkey first: a decision is signed with it',
    );
  return signed;
}

export function createDecisionSigning(o: {
  passkeys: PasskeyRoutes;
  /** The store of a listed workspace by its id (decide-routes.ts). */
  storeOf: (workspace: string) => Store;
  log: (line: string) => void;
}): DecisionSigning {
  const pending = oneTime<PendingDecision>(CHALLENGE_TTL_MS);
  return {
    async ask(req, workspace, store, capability, input) {
      const site = callSite(req);
      const signed = signedInOrRefuse(o.passkeys, req);
      const actor: Actor = { kind: 'user', id: signed.key.name, channel: 'browser' };
      const prepared = prepareCall(store, capability, input, actor);
      const statement = decisionStatement(prepared.facts, prepared.workspace);
      const options = await generateAuthenticationOptions({
        rpID: site.rpId,
        // The statement's sha256 is the challenge: the authenticator signs this decision, nothing else.
        challenge: new Uint8Array(Buffer.from(passkeyChallenge(statement), 'base64url')),
        allowCredentials: [{ id: signed.key.passkey.credentialId }],
        userVerification: 'required',
        timeout: CHALLENGE_TTL_MS,
      });
      const id = pending.put({
        ...site,
        prepared,
        statement,
        challenge: options.challenge,
        workspace,
        keyId: signed.key.keyId,
        session: signed.session,
      });
      return { body: { id, options, expires_in_s: CHALLENGE_TTL_MS / 1000 } };
    },

    async commit(req, body) {
      // Spent by its first answer, whatever comes of it: a replayed POST finds nothing.
      const p = pending.take(body.id);
      const site = callSite(req);
      const signed = signedInOrRefuse(o.passkeys, req);
      if (!p)
        throw httpRefusal(
          410,
          'decision_challenge_spent',
          'this decision was already sent or has expired: decide again',
        );
      if (signed.session !== p.session || signed.key.keyId !== p.keyId || site.origin !== p.origin)
        throw refused('this decision was asked for by another session or from another origin', {
          reason: 'decision_other_session',
        });
      const response = responseOf<AuthenticationResponseJSON>(body);
      if (response.id !== signed.key.passkey.credentialId)
        throw refused('the answer is from another passkey than the one asked', {
          reason: 'passkey_not_pinned',
        });
      await verifyAssertion(signed.key, response, site, p.challenge);
      const sig = {
        keyId: signed.key.keyId,
        ws: p.prepared.workspace,
        sig: Buffer.from(response.response.signature, 'base64url').toString('base64'),
        webauthn: {
          authenticatorData: response.response.authenticatorData,
          clientDataJSON: response.response.clientDataJSON,
        },
      };
      const store = o.storeOf(p.workspace);
      const why = store.trust().rejectsStatement(p.statement, sig);
      if (why) throw refused(`the decision would have no effect: ${why}`, { reason: 'untrusted_signer' });
      const r = commitPreparedCall(store, p.prepared, sig);
      o.log(`${forLogLine(p.prepared.facts.type)} on ${forLogLine(p.prepared.goalId)} signed with a passkey`);
      const gate = r.state.gates.find((g) => g.id === p.prepared.input.gateId);
      return {
        body: {
          ok: true,
          event_id: r.events[0]?.id,
          type: p.prepared.facts.type,
          ...(gate ? { gate_status: gate.status } : {}),
          ...(p.prepared.facts.type === 'quota.granted' ? { quota: quotaUse(r.state, new Date()) } : {}),
        },
      };
    },
  };
}
