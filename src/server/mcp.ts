/**
 * `loopx mcp`: an MCP server over stdio exposing the agent tools (the same ones VS Code's agent
 * mode gets as language-model tools), the status document and each goal as resources. Nothing
 * human-only is exposed. The official SDK handles the protocol; the JSON schemas come from our
 * zod schemas, and inputs are validated by the tools themselves.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Actor, Store } from '../core/index';
import {
  AGENT_TOOLS,
  callAgentTool,
  checkId,
  cleanAgentName,
  errorReport,
  forLogLine,
  goalStatus,
  hostSessionAgent,
  LoopxError,
  randomSuffix,
  sessionAgentId,
  statusAll,
  toolInputJsonSchema,
} from '../core/index';

export const MCP_SERVER_NAME = 'loopx';
const STATUS_URI = 'loopx://status';
const GOAL_URI = /^loopx:\/\/goals\/([^/?#]+)$/;

/** The Codex session a tool call's metadata names, if any (a string of at most 200 characters). */
function codexSessionOf(meta: unknown): string | undefined {
  const turn = (meta as Record<string, unknown> | undefined)?.['x-codex-turn-metadata'];
  const id = (turn as Record<string, unknown> | undefined)?.session_id;
  return typeof id === 'string' && id.trim() && id.length <= 200 ? id.trim() : undefined;
}

export function createMcpServer(store: Store, opts: { version: string; agent?: string }): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, version: opts.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'LoopX governs this workspace. Start every turn with loopx_get_contract; run only the shell commands its ' +
        'cli_channel.next_cli_actions list, exactly as given; report spend with loopx_report_spend; end the turn with ' +
        'the finish_with command. Gates, rewards and quota are a person’s decisions. Who you are comes from this ' +
        'connection: you work only under your own contract.',
    },
  );
  /**
   * The agent on the other end, from the connection (core/trust/identity.ts), never from a tool's input:
   * - the name the person configured for this server (`loopx mcp --agent`, or LOOPX_AGENT in its
   *   environment), as it is: a name chosen outside the agent's reach, stable across restarts, and
   *   the same one its shell (LOOPX_AGENT) and hooks use, so one agent's channels agree;
   *   When the host names its session in the server's environment (Claude Code), the CLI passes
   *   that session's identity here the same way (core/trust/identity.ts, agentFromEnv);
   * - else the Codex session a call's metadata names (`_meta["x-codex-turn-metadata"]`, which
   *   Codex sets, not the model), so the session's MCP calls and its shell commands
   *   (CODEX_SESSION_ID) are one agent with one run;
   * - else the client's own name plus this server's session id: the client picks its name, so
   *   the name alone would let a client called "agentA" act as agentA. One server process serves
   *   one client, so the session is the process.
   * Control and invisible characters in a name would make every event fail validation: they go.
   */
  const session = randomSuffix(6);
  const actor = (meta: unknown): Actor => {
    const codex = codexSessionOf(meta);
    const id = opts.agent
      ? cleanAgentName(opts.agent, 'mcp-client')
      : codex
        ? hostSessionAgent('codex', codex)
        : sessionAgentId(server.getClientVersion()?.name ?? '', session, 'mcp-client');
    return { kind: 'agent', id, channel: 'mcp' };
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: AGENT_TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: toolInputJsonSchema(t) as { type: 'object' },
      annotations: { readOnlyHint: !t.writes, destructiveHint: false, openWorldHint: false },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    try {
      const result = callAgentTool(
        store,
        req.params.name,
        req.params.arguments ?? {},
        actor(req.params._meta),
      );
      return { content: [{ type: 'text', text: result.text }], structuredContent: { result: result.data } };
    } catch (e) {
      const text = e instanceof LoopxError ? e.message : `unexpected error: ${(e as Error)?.message ?? e}`;
      // The text is for the model; the kind and reason code (e.g. `contract_expired`) for programs.
      const error = { ...errorReport(e), message: text };
      return { content: [{ type: 'text', text }], structuredContent: { error }, isError: true };
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [
      { uri: STATUS_URI, name: 'status', title: 'LoopX status of every goal', mimeType: 'application/json' },
      ...store.listGoals().goals.map((g) => ({
        uri: `loopx://goals/${g.id}`,
        name: g.id,
        title: g.title,
        mimeType: 'application/json',
      })),
    ],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'loopx://goals/{goalId}',
        name: 'goal',
        title: 'One LoopX goal',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri;
    let doc: unknown;
    if (uri === STATUS_URI) doc = statusAll(store);
    else {
      const m = GOAL_URI.exec(uri);
      if (!m)
        throw new Error(
          `unknown resource ${JSON.stringify(uri.slice(0, 200))}: use ${STATUS_URI} or loopx://goals/<goal-id>`,
        );
      doc = goalStatus(store, checkId(decodeURIComponent(m[1]!), 'goal id'));
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(doc) }] };
  });
  return server;
}

/** Serves until the client closes stdin. */
export async function serveMcp(
  store: Store,
  opts: { version: string; agent?: string; transport?: Transport },
): Promise<void> {
  const server = createMcpServer(store, opts);
  const transport = opts.transport ?? new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (server.onclose = () => resolve()));
  if (!opts.transport) {
    // Say why a session ends or a line is dropped (a line that is not JSON, a message over the
    // SDK's 10 MiB limit): stderr is the MCP host's log.
    server.onerror = (e) => void process.stderr.write(`loopx mcp: ${forLogLine(e.message, 300)}\n`);
  }
  await server.connect(transport);
  if (!opts.transport) process.stdin.once('end', () => void server.close());
  await closed;
  // The SDK's stdio transport closes itself on a message over its size limit and only pauses
  // stdin, which keeps the process alive but deaf while the client waits: end stdin, so that
  // `loopx mcp` exits and the client sees the connection close.
  if (!opts.transport) process.stdin.destroy();
}
