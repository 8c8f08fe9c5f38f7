/**
 * A scripted Anthropic Messages API on loopback, for driving the real Claude Code CLI
 * (ANTHROPIC_BASE_URL) offline. The test's script decides each reply from the conversation so
 * far; every request is recorded. Claude Code streams (`stream: true`) and reads the reply as
 * server-sent events, so a reply is sent as the event sequence of a real one.
 */
import { randomBytes } from 'node:crypto';
import { startRecordingServer, type RecordingServer } from './agent-kit';

/** One piece of a reply: a tool call (a `tool_use` block) or text. */
export type Step = { tool: string; input: object } | { text: string };

/** The usage every reply reports, so a test can work out the spend it expects. */
export const MESSAGES_USAGE = {
  input_tokens: 1000,
  output_tokens: 50,
  cache_creation_input_tokens: 200,
  cache_read_input_tokens: 300,
} as const;
/** What one scripted reply costs in tokens, as the Stop hook counts it from the transcript. */
export const TOKENS_PER_REPLY =
  MESSAGES_USAGE.input_tokens +
  MESSAGES_USAGE.output_tokens +
  MESSAGES_USAGE.cache_creation_input_tokens +
  MESSAGES_USAGE.cache_read_input_tokens;

/** A call of Claude Code's Bash tool. */
export const bash = (command: string): Step => ({ tool: 'Bash', input: { command, description: command } });

interface Block {
  type: string;
  text?: string;
  content?: string | Block[];
  input?: unknown;
  id?: string;
  tool_use_id?: string;
}
interface Message {
  role: string;
  content: string | Block[];
}
export interface MessagesBody {
  model?: string;
  stream?: boolean;
  tools?: { name: string }[];
  messages?: Message[];
}

export interface MessagesTurn {
  body: MessagesBody;
  /** How many replies the conversation already holds (0 for the first request). */
  step: number;
  /** The text of the latest `tool_result` (what the CLI reports its last tool call did). */
  lastToolResultText(): string | undefined;
  /** Every text of the conversation: prompts, replies, tool inputs (as JSON) and tool results. */
  allText(): string;
}

export type MessagesScript = (turn: MessagesTurn) => Step | Step[];

const textOf = (c: string | Block[] | undefined): string =>
  typeof c === 'string'
    ? c
    : (c ?? [])
        .map((b) => (b.type === 'tool_use' ? JSON.stringify(b.input) : (b.text ?? textOf(b.content))))
        .join('\n');

function turnOf(body: MessagesBody): MessagesTurn {
  const messages = body.messages ?? [];
  return {
    body,
    step: messages.filter((m) => m.role === 'assistant').length,
    lastToolResultText() {
      for (const m of [...messages].reverse()) {
        if (typeof m.content === 'string') continue;
        const results = m.content.filter((b) => b.type === 'tool_result');
        if (results.length) return textOf(results[results.length - 1]!.content);
      }
      return undefined;
    },
    allText: () => messages.map((m) => textOf(m.content)).join('\n'),
  };
}

/**
 * Serves the script on 127.0.0.1 (a free port). Requests with tools are the conversation and go
 * to the script; the CLI's side requests (no tools: titles, summaries) get a short text.
 */
export function startMessagesApi(script: MessagesScript): Promise<RecordingServer> {
  // A prefix of the server's own, so that ids never repeat across servers (and sessions).
  const run = randomBytes(4).toString('hex');
  let replies = 0;
  return startRecordingServer((req) => {
    if (req.method !== 'POST' || !req.path.startsWith('/v1/messages')) return undefined;
    const body = req.body as MessagesBody;
    if (req.path === '/v1/messages/count_tokens') {
      return { status: 200, json: { input_tokens: MESSAGES_USAGE.input_tokens } };
    }
    const n = ++replies;
    const steps = body.tools?.length ? [script(turnOf(body))].flat() : [{ text: 'ok' }];
    const content = steps.map((s, i) =>
      'tool' in s
        ? { type: 'tool_use', id: `toolu_${run}_${n}_${i}`, name: s.tool, input: s.input }
        : { type: 'text', text: s.text },
    );
    const message = {
      id: `msg_${run}_${n}`,
      type: 'message',
      role: 'assistant',
      model: body.model ?? 'scripted',
      content,
      stop_reason: steps.some((s) => 'tool' in s) ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: MESSAGES_USAGE,
    };
    return body.stream ? { status: 200, sse: sseOf(message) } : { status: 200, json: message };
  });
}

// A whole message as the stream of a real one: the start (with the input usage), each block
// opened, filled by one delta and closed, then the stop reason with the output usage.
function sseOf(m: {
  content: { type: string; text?: string; input?: unknown }[];
  stop_reason: string;
  usage: typeof MESSAGES_USAGE;
}): [string, unknown][] {
  const events: [string, unknown][] = [
    [
      'message_start',
      {
        type: 'message_start',
        message: { ...m, content: [], stop_reason: null, usage: { ...m.usage, output_tokens: 1 } },
      },
    ],
  ];
  m.content.forEach((block, index) => {
    const empty = block.type === 'tool_use' ? { ...block, input: {} } : { ...block, text: '' };
    const delta =
      block.type === 'tool_use'
        ? { type: 'input_json_delta', partial_json: JSON.stringify(block.input) }
        : { type: 'text_delta', text: block.text };
    events.push(
      ['content_block_start', { type: 'content_block_start', index, content_block: empty }],
      ['content_block_delta', { type: 'content_block_delta', index, delta }],
      ['content_block_stop', { type: 'content_block_stop', index }],
    );
  });
  events.push(
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: m.stop_reason, stop_sequence: null },
        usage: { output_tokens: m.usage.output_tokens },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  );
  return events;
}

/** The text of each tool result Claude Code sent back, in the order the calls were made. */
export function toolResults(api: RecordingServer): string[] {
  const { messages = [] } = api.requests.at(-1)!.body as MessagesBody;
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const text = (c: string | Block[] | undefined): string =>
    typeof c === 'string' ? c : (c ?? []).map((b) => b.text ?? text(b.content)).join('\n');
  return blocks
    .filter((b) => b.type === 'tool_use')
    .map((call) => text(blocks.find((b) => b.type === 'tool_result' && b.tool_use_id === call.id)?.content));
}
