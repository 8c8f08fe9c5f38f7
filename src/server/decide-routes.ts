/**
 * Deciding from a browser, with a passkey (docs/SECURITY.md, "Deciding from a browser"):
 *
 *   GET  /decide                          what waits for a person in every workspace the config
 *                                         folder lists: gates, and budgets used up (JSON with
 *                                         `Accept: application/json`)
 *   GET  /decide/<workspace>/<goal>/<gate> one gate: the facts the editor's modal shows (JSON likewise)
 *   GET  /grant/<workspace>/<goal>        a goal's budgets, to grant more (JSON likewise)
 *   GET  /reward/<workspace>/<goal>       the goal's runs that ended (the 20 newest), each with its
 *                                         summary, evidence and rewards, to record a reward on
 *                                         one (JSON likewise)
 *   POST /decide/options                  {workspace, goal, decision: approve|reject, gate, note,
 *                                         shown}, {workspace, goal, decision: grant, budgets,
 *                                         note, shown} or {workspace, goal, decision: reward, run,
 *                                         score, comment, shown}: the decision is fixed and signed
 *                                         (decide-signing.ts)
 *   POST /decide/commit                   {id, response}: written exactly, or refused
 *
 * A workspace is named by `workspaceId(path)` and found only in the config folder's list: no path
 * from a request reaches the file system. The JSON needs a session; asking to sign needs a session
 * signed in with a passkey (passkey-routes.ts), whose name is the decision's actor. `shown` is a
 * digest of what the page showed (the gate's work, the goal's budgets, the one run rewarded): a
 * decision on something that changed since is refused as `decision_stale`. A reward's score and
 * comment are checked by the capability (`reward.add`), not here: its refusal is the page's.
 */
import type * as http from 'node:http';
import * as path from 'node:path';
import type { GoalState, RunItem } from '../core/index';
import {
  awaitsDecision,
  BUDGET_LABEL,
  BUDGET_NAMES,
  canonicalJson,
  checkId,
  gateFacts,
  listCapabilities,
  listWorkspaces,
  needsYou,
  notFound,
  quotaUse,
  refused,
  runDoc,
  runList,
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
  /** Answers `/decide` and below, `/grant/*` and `/reward/*`; false for any other path. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): boolean;
}

const wantsJson = (req: http.IncomingMessage) => /\bapplication\/json\b/i.test(req.headers.accept ?? '');

/** What the page showed, as one value it sends back with the decision. */
const shownDigest = (shown: unknown) => sha256(canonicalJson(shown)).slice(0, 32);

/** What a grant is decided on: the goal's budgets and what was granted before. */
const budgetsShown = (s: GoalState) => ({ budgets: s.quota.budgets, granted: s.granted });

/** How many of a goal's ended runs the reward page lists, newest first. */
const REWARD_RUNS = 20;

/**
 * One run as the reward page shows it, from the core's read documents (`run list` for what a run
 * is and its evidence, `run show` for its summary and rewards whole). A reward is decided on
 * this, so it is also what `shown` digests: a run rewarded meanwhile is looked at again.
 */
function runShown(state: GoalState, item: RunItem) {
  const doc = runDoc(state, item.id);
  return {
    id: item.id,
    agent: item.agent,
    outcome: item.outcome ?? null,
    started_at: item.started_at,
    ended_at: item.ended_at ?? null,
    summary: doc.summary ?? null,
    evidence: item.evidence.length,
    rewards: doc.rewards,
  };
}

/** What `reward.add` takes for a score and a comment, read from the capability's own input schema. */
function rewardLimits() {
  const input = listCapabilities().find((c) => c.id === 'reward.add')?.input as
    { properties?: Record<string, { minimum?: number; maximum?: number; maxLength?: number }> } | undefined;
  const p = input?.properties ?? {};
  return {
    score_min: p.score?.minimum ?? null,
    score_max: p.score?.maximum ?? null,
    comment_max: p.comment?.maxLength ?? null,
  };
}

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
          rewards_href: `reward/${at}`,
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

  /** A goal's ended runs as the reward page shows them, with what a score and a comment may be. */
  function rewardDetail(req: http.IncomingMessage, parts: string[]) {
    requireSession(req);
    const store = storeOf(parts[0]);
    const state = store.load(checkId(parts[1]!, 'goal id')).state;
    const ended = runList(state).filter((r) => r.ended_at);
    return {
      signed_in: signedIn(req),
      workspace: { id: parts[0], name: path.basename(store.workspace) },
      goal: { id: state.id, title: state.title, status: state.status },
      ...rewardLimits(),
      runs_ended: ended.length,
      runs: ended.slice(0, REWARD_RUNS).map((r) => {
        const run = runShown(state, r);
        return { ...run, shown: shownDigest(run) };
      }),
    };
  }

  /** The run a reward is asked for, as the page showed it: one that ended, unchanged since. */
  function rewardedRun(state: GoalState, runId: unknown, shown: unknown, stale: (what: string) => Error) {
    const id = checkId(String(runId ?? ''), 'run id');
    // A run the goal does not have: `run show`'s lookup refuses it (`run_not_found`).
    const item = runList(state).find((r) => r.id === id) ?? runDoc(state, id);
    if (!item.ended_at)
      throw refused(`run ${id} of goal ${state.id} has not ended: the page rewards a run that ended`, {
        reason: 'run_not_ended',
        goalId: state.id,
        runId: id,
      });
    if (shown !== shownDigest(runShown(state, item))) throw stale(`run ${id}`);
    return id;
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
    if (decision === 'reward') {
      const state = store.load(checkId(String(body.goal ?? ''), 'goal id')).state;
      const runId = rewardedRun(state, body.run, body.shown, stale);
      // Score and comment go to the capability as sent: its input schema is the one rule for them.
      return signing.ask(req, workspace, store, 'reward.add', {
        goalId: state.id,
        runId,
        score: body.score,
        comment: body.comment,
      });
    }
    if (decision !== 'approve' && decision !== 'reject')
      throw usageError('decision must be approve, reject, grant or reward', { reason: 'bad_decision' });
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
      const reward = /^\/reward\/([^/]+)\/([^/]+)$/.exec(pathname);
      if (reward) return (page(req, res, 'reward', reward.slice(1), (p) => rewardDetail(req, p)), true);
      return false;
    },
  };
}
