/**
 * Who is calling. An agent's identity comes from the channel it calls through, never from a field
 * the agent fills in (docs/TRUST.md):
 * - MCP (`loopx mcp`): the name the person configured for the server (`--agent`, or LOOPX_AGENT in
 *   the server's environment), as it is; else the client's own name plus a session id minted when
 *   the server starts (`claude-code-7k2f9x`), so no client can take another's identity by naming
 *   itself after it.
 * - VS Code language-model tools: the `loopx.agentName` setting plus a hash of the chat session
 *   (of the window when the host gives no chat session).
 * - The CLI: `LOOPX_AGENT`, else the agent host session it runs in (`hostSessionAgent`: Claude
 *   Code and Codex name their session in every tool's environment). Without either the caller has
 *   no identity: a contract id is then the capability, as it always was, and `--agent` names the
 *   agent.
 * - Hooks: the same, from the hook's environment (the host's session).
 * - MCP, when the person configured no name: the host session of the server's environment, or
 *   the one Codex names in each call's metadata; else the client's name plus a session id.
 *
 * With an identity, a caller works only under its own contracts and on its own runs.
 */
import { createHash } from 'node:crypto';
import type { Contract, GoalState, Run } from '../model';
import { quote, refused, withoutUnsafeCharacters } from '../model';

/** The agent a CLI caller with no identity (no LOOPX_AGENT, no --agent) acts as. */
export const DEFAULT_AGENT = 'agent';
/** The longest agent name (the model's `Line(128)`). */
const MAX_AGENT_NAME = 128;

/**
 * An agent name from outside (a client's name, a setting): no control or invisible characters,
 * trimmed, at most `max` characters; `fallback` when nothing is left.
 */
export function cleanAgentName(raw: string, fallback: string, max = MAX_AGENT_NAME): string {
  const clean = withoutUnsafeCharacters(raw).trim().slice(0, max).trim();
  return clean || fallback;
}

/** `name-session`, the name shortened so that the whole stays within MAX_AGENT_NAME. */
export function sessionAgentId(name: string, session: string, fallback: string): string {
  return `${cleanAgentName(name, fallback, MAX_AGENT_NAME - session.length - 1)}-${session}`;
}

/**
 * Agent hosts that name their session in the environment of every process they start for it (its
 * shell commands, its hooks, its MCP servers), by host name and variable.
 */
const HOST_SESSION_VARS = [
  ['claude-code', 'CLAUDE_CODE_SESSION_ID'],
  ['codex', 'CODEX_SESSION_ID'],
] as const;
export type AgentHost = (typeof HOST_SESSION_VARS)[number][0];

/**
 * The identity of one agent host session, the same on every channel it calls through: the host's
 * name and a short hash of its session id (`claude-code-3f9a1c02`). Its shell commands, its hooks
 * and its MCP server all derive it from the session the host names, so the session has one run
 * per goal, whichever channel asks for the contract, reports, or ends the turn.
 */
export function hostSessionAgent(host: AgentHost, session: string): string {
  const suffix = createHash('sha256').update(session).digest('hex').slice(0, 8);
  return sessionAgentId(host, suffix, host);
}

/** The host session a process runs in, from the variables its host set; undefined outside one. */
export function hostSessionFromEnv(env: NodeJS.ProcessEnv): { host: AgentHost; session: string } | undefined {
  for (const [host, name] of HOST_SESSION_VARS) {
    const session = env[name]?.trim();
    if (session) return { host, session: session.slice(0, 200) };
  }
  return undefined;
}

/** The agent a process speaks for by its environment: LOOPX_AGENT, else its host session's; else none. */
export function agentFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  if (env.LOOPX_AGENT) return env.LOOPX_AGENT;
  const s = hostSessionFromEnv(env);
  return s && hostSessionAgent(s.host, s.session);
}

/**
 * Refuses a contract issued to another agent than `caller` (when the caller's identity is known).
 */
export function assertOwnContract(contract: Contract, caller: string | undefined): void {
  if (caller === undefined || contract.agent === caller) return;
  throw refused(
    `contract ${contract.id} was issued to agent ${quote(contract.agent)}, not to you (${quote(caller)}): an agent works only under its own contract`,
    { contractId: contract.id, agent: caller, reason: 'contract_other_agent' },
  );
}

/** Refuses a run of another agent than `caller` (when the caller's identity is known). */
export function assertOwnRun(run: Run, caller: string | undefined): void {
  if (caller === undefined || run.agent === caller) return;
  throw refused(
    `run ${run.id} is agent ${quote(run.agent)}'s, not yours (${quote(caller)}): an agent reports only on its own runs`,
    { runId: run.id, agent: caller, reason: 'run_other_agent' },
  );
}

/**
 * The agent a call names (`given`, e.g. `--agent`), checked against the caller's identity: a
 * caller with an identity cannot act in another agent's name.
 */
export function sameAgent(
  given: string | undefined,
  caller: string | undefined,
  what: string,
): string | undefined {
  if (given === undefined || caller === undefined || given === caller) return given ?? caller;
  throw refused(
    `${what} ${quote(given)} is not you: your identity is ${quote(caller)} (from the channel you call through), and an agent acts only in its own name. Leave ${what} out`,
    { agent: caller, given, reason: 'agent_mismatch' },
  );
}

/**
 * The open runs of `state` this clone opened (`writer`; undefined: every clone's, a preview), of
 * `agent` when given. After a pull another clone's runs are there to see: ending or reusing them
 * is that clone's business (a run ended here would end its live contract once the logs merge).
 */
export function ownOpenRuns(state: GoalState, writer: string | undefined, agent?: string): Run[] {
  return state.runs.filter(
    (r) =>
      !r.endedAt &&
      (agent === undefined || r.agent === agent) &&
      (writer === undefined || r.writer === undefined || r.writer === writer),
  );
}
