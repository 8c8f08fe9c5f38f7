/**
 * Deciding from a browser, with a passkey (docs/SECURITY.md, "Deciding from a browser"):
 *
 *   GET  /decide                          what waits for a person in every workspace the config
 *                                         folder lists: gates, and budgets used up (JSON with
 *                                         `Accept: application/json`)
 *   GET  /decide/<workspace>/<goal>/<gate> one gate: the facts the editor's modal shows (JSON likewise)
 *   GET  /grant/<workspace>/<goal>        a goal's budgets, to grant more (JSON likewise)
 *   POST /decide/options                  {workspace, goal, decision: approve|reject, gate, note,
 *                                         shown} or {workspace, goal, decision: grant, budgets,
 *                                         note, shown}: the decision is fixed and signed
 *                                         (decide-signing.ts)
 *   POST /decide/commit                   {id, response}: written exactly, or refused
 *
 * A workspace is named by `workspaceId(path)` and found only in the config folder's list: no path
 * from a request reaches the file system. The JSON needs a session; asking to sign needs a session
 * signed in with a passkey (passkey-routes.ts), whose name is the decision's actor. `shown` is a
 * digest of what the page showed (the gate's work, the goal's budgets): a decision on something
 * that changed since is refused as `decision_stale`.
 */
import type * as http from 'node:http';
import * as path from 'node:path';
import type { GoalState } from '../core/index';
import {
  awaitsDecision,
  BUDGET_LABEL,
  BUDGET_NAMES,
  canonicalJson,
  checkId,
  gateFacts,
  listWorkspaces,
  needsYou,
  notFound,
  quotaUse,
  sha256,
  Store,
  usageError,
  workspaceId,
} from '../core/index';
import type { DecidePageKind } from './decide-page';
import { sendDecidePage } from './decide-page';
import { createDecisionSigning, signedInOrRefuse } from './decide-signing';
import { answerPost, httpRefusal, sendFailure } from './json-body';
import type { PasskeyRoutes } from './passkey-routes';
import { send, sendError } from './responses';

export const DECIDE_POST_PATHS = ['/decide/options', '/decide/commit'] as const;

export interface DecideRoutes {
  /** Answers `/decide` and below and `/grant/*`; false for any other path. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): boolean;
}

const wantsJson = (req: http.IncomingMessage) => /\bapplication\/json\b/i.test(req.headers.accept ?? '');

/** What the page showed, as one value it sends back with the decision. */
const shownDigest = (shown: unknown) => sha256(canonicalJson(shown)).slice(0, 32);

/** What a grant is decided on: the goal's budgets and what was granted before. */
const budgetsShown = (s: GoalState) => ({ budgets: s.quota.budgets, granted: s.granted });

export function createDecideRoutes(o: {
  configDir: string;
  /** The server's own store (its workspace is opened through it). */
  store: Store;
  authorized: (req: http.IncomingMessage) => boolean;
  passkeys: PasskeyRoutes;
  log: (line: string) => void;
}): DecideRoutes {
  const stores = new Map<string, Store>();
  const own = workspaceId(o.store.workspace);

  /** The store of a listed workspace by its id; never a path from the request. */
  function storeOf(id: unknown): Store {
    if (typeof id !== 'string' || !/^[0-9a-f]{32}$/.test(id))
      throw usageError('workspace must be a workspace id (32 hex digits)', { reason: 'no_such_workspace' });
    if (id === own) return o.store;
    const w = listWorkspaces(o.configDir, { prune: false }).workspaces.find(
      (x) => workspaceId(x.path) === id,
    );
    if (!w)
      throw notFound(`no workspace ${id} is listed in this machine's LoopX config folder`, {
        reason: 'no_such_workspace',
      });
    let s = stores.get(w.path);
    if (!s) stores.set(w.path, (s = Store.open(w.path, { configDir: o.configDir })));
    return s;
  }
  const signing = createDecisionSigning({ passkeys: o.passkeys, storeOf, log: o.log });

  function requireSession(req: http.IncomingMessage) {
    if (!o.authorized(req))
      throw httpRefusal(
        401,
        'unauthorized',
        'sign in with your passkey first (or open a login link from `loopx status-server --login-link`)',
      );
  }
  const signedIn = (req: http.IncomingMessage) => {
    const who = o.passkeys.signedIn(req)?.key;
    return who ? { name: who.name } : null;
  };

  function list(req: http.IncomingMessage) {
    requireSession(req);
    const doc = needsYou({
      configDir: o.configDir,
      kinds: ['gate', 'quota'],
      open: (w) => storeOf(workspaceId(w.path)),
    });
    return {
      signed_in: signedIn(req),
      items: doc.items.map((i) => {
        const at = `${workspaceId(i.workspace.path)}/${encodeURIComponent(i.goal_id)}`;
        return {
          kind: i.kind,
          href: i.kind === 'gate' ? `decide/${at}/${encodeURIComponent(i.id)}` : `grant/${at}`,
          workspace: i.workspace.name,
          goal_id: i.goal_id,
          goal_title: i.goal_title,
          id: i.id,
          title: i.title,
          detail: i.detail,
          requested_by: i.requested_by ?? null,
          commands: i.commands ?? [],
        };
      }),
      problems: doc.workspaces.filter((w) => w.problem).map((w) => `${w.name}: ${w.problem}`),
    };
  }

  /** The gate and the facts a person reads, as the editor's modal shows them. */
  function gateView(store: Store, goalId: string, gateId: string) {
    const state = store.load(checkId(goalId, 'goal id')).state;
    const gate = state.gates.find((g) => g.id === checkId(gateId, 'gate id'));
    if (!gate) throw notFound(`goal ${goalId} has no gate ${gateId}`, { reason: 'no_such_gate', goalId });
    const policy = store.policy();
    const more = 'loopx gate show shows it whole';
    const approve = gateFacts(state, policy, gate, 'approve', { more });
    const reject = gateFacts(state, policy, gate, 'reject', { more });
    return { state, gate, policy, approve, reject, awaits: awaitsDecision(gate, state, policy) };
  }

  function gateDetail(req: http.IncomingMessage, parts: string[]) {
    requireSession(req);
    const store = storeOf(parts[0]);
    const v = gateView(store, parts[1]!, parts[2]!);
    return {
      signed_in: signedIn(req),
      workspace: { id: parts[0], name: path.basename(store.workspace) },
      goal: { id: v.state.id, title: v.state.title },
      gate: { id: v.gate.id, title: v.gate.title, status: v.gate.status, awaits_decision: v.awaits },
      approve_text: v.approve.text,
      reject_text: v.reject.text,
      shown: shownDigest(v.approve.work),
    };
  }

  /** A goal's budgets as a grant page shows them: what is used of each, and its limit. */
  function grantDetail(req: http.IncomingMessage, parts: string[]) {
    requireSession(req);
    const store = storeOf(parts[0]);
    const state = store.load(checkId(parts[1]!, 'goal id')).state;
    const use = quotaUse(state, new Date(store.now()));
    return {
      signed_in: signedIn(req),
      workspace: { id: parts[0], name: path.basename(store.workspace) },
      goal: { id: state.id, title: state.title, status: state.status },
      budgets: BUDGET_NAMES.filter((k) => use[k]).map((k) => ({
        name: k,
        label: BUDGET_LABEL[k],
        ...use[k]!,
      })),
      shown: shownDigest(budgetsShown(state)),
    };
  }

  /** The decision a page asks to sign, checked against what it showed, then fixed and signed. */
  async function options(req: http.IncomingMessage, body: Record<string, unknown>) {
    requireSession(req);
    signedInOrRefuse(o.passkeys, req);
    const decision = body.decision;
    const note = body.note === undefined || body.note === '' ? undefined : body.note;
    const store = storeOf(body.workspace);
    const workspace = String(body.workspace);
    const stale = (what: string) =>
      httpRefusal(409, 'decision_stale', `${what} changed since the page showed it: look again, then decide`);
    if (decision === 'grant') {
      const state = store.load(checkId(String(body.goal ?? ''), 'goal id')).state;
      if (body.shown !== shownDigest(budgetsShown(state))) throw stale('the goal’s budgets');
      return signing.ask(req, workspace, store, 'quota.grant', {
        goalId: state.id,
        budgets: body.budgets,
        note,
      });
    }
    if (decision !== 'approve' && decision !== 'reject')
      throw usageError('decision must be approve, reject or grant', { reason: 'bad_decision' });
    const v = gateView(store, String(body.goal ?? ''), String(body.gate ?? ''));
    if (body.shown !== shownDigest(v.approve.work)) throw stale('the gate’s work');
    const input = { goalId: v.state.id, gateId: v.gate.id, note, shown: v.approve.work };
    return signing.ask(req, workspace, store, decision === 'approve' ? 'gate.approve' : 'gate.reject', input);
  }

  function getJson(res: http.ServerResponse, make: () => unknown) {
    try {
      send(res, 200, make());
    } catch (e) {
      sendFailure(res, e);
    }
  }

  /** A page (fixed text) or, asked for JSON, its data; `parts` are the path's decoded segments. */
  function page(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    kind: DecidePageKind,
    raw: string[],
    data: (parts: string[]) => unknown,
  ) {
    if (!wantsJson(req)) return sendDecidePage(res, kind, '../'.repeat(raw.length));
    let parts: string[];
    try {
      parts = raw.map(decodeURIComponent);
    } catch {
      return sendError(res, 400, 'usage', 'the path is not valid percent-encoding');
    }
    getJson(res, () => data(parts));
  }

  return {
    handle(req, res, pathname) {
      if (pathname === '/decide/options') return (answerPost(req, res, (b) => options(req, b)), true);
      if (pathname === '/decide/commit') return (answerPost(req, res, (b) => signing.commit(req, b)), true);
      if (pathname === '/decide' || pathname === '/decide/') {
        if (wantsJson(req)) getJson(res, () => list(req));
        else sendDecidePage(res, 'list', pathname === '/decide' ? './' : '../');
        return true;
      }
      const gate = /^\/decide\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(pathname);
      if (gate) return (page(req, res, 'gate', gate.slice(1), (p) => gateDetail(req, p)), true);
      const grant = /^\/grant\/([^/]+)\/([^/]+)$/.exec(pathname);
      if (grant) return (page(req, res, 'grant', grant.slice(1), (p) => grantDetail(req, p)), true);
      return false;
    },
  };
}
