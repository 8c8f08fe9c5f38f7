/**
 * A scripted OpenAI Responses API on loopback, for driving the real Codex CLI offline (a model
 * provider with `wire_api = "responses"`). The test's script decides each reply from the input so
 * far; every request is recorded. Codex streams: a reply is sent as server-sent events, one
 * `response.output_item.done` per item between `response.created` and `response.completed`.
 */
import { randomBytes } from 'node:crypto';
import { startRecordingServer, type RecordingServer } from './agent-kit';

/**
 * One piece of a reply: a function call or text. A tool of an MCP server is called with
 * `namespace: 'mcp__<server>'` and the tool's own name.
 */
export type Step = { tool: string; input: object; namespace?: string } | { text: string };

/** The usage every reply reports, so a test can work out the spend it expects. */
export const RESPONSES_USAGE = {
  input_tokens: 1000,
  input_tokens_details: { cached_tokens: 300 },
  output_tokens: 50,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 1050,
} as const;

type Text = string | { type: string; text?: string }[];
interface InputItem {
  type: string;
  content?: Text;
  arguments?: string;
  output?: Text;
}
export interface ResponsesBody {
  model?: string;
  tools?: { type: string; name: string; tools?: { name: string }[] }[];
  input?: InputItem[];
}

export interface ResponsesTurn {
  body: ResponsesBody;
  /** How many function calls the input already holds (0 for the first request). */
  step: number;
  /** The text of the latest `function_call_output` (what Codex reports its last call did). */
  lastToolOutputText(): string | undefined;
  /** Every text of the input: messages, call arguments (JSON) and call outputs. */
  allText(): string;
}

export type ResponsesScript = (turn: ResponsesTurn) => Step | Step[];

const textOf = (t: Text | undefined): string =>
  typeof t === 'string' ? t : (t ?? []).map((p) => p.text ?? '').join('\n');

function turnOf(body: ResponsesBody): ResponsesTurn {
  const input = body.input ?? [];
  return {
    body,
    step: input.filter((i) => i.type === 'function_call').length,
    lastToolOutputText() {
      const outputs = input.filter((i) => i.type === 'function_call_output');
      return outputs.length ? textOf(outputs[outputs.length - 1]!.output) : undefined;
    },
    allText: () => input.map((i) => i.arguments ?? textOf(i.content ?? i.output)).join('\n'),
  };
}

/** Serves the script on 127.0.0.1 (a free port); `url` is the provider's base URL (`.../v1`). */
export async function startResponsesApi(script: ResponsesScript): Promise<RecordingServer> {
  // A prefix of the server's own, so that ids never repeat across servers (and sessions).
  const run = randomBytes(4).toString('hex');
  let replies = 0;
  const server = await startRecordingServer((req) => {
    if (req.method !== 'POST' || req.path !== '/v1/responses') return undefined;
    const n = ++replies;
    const id = `resp_${run}_${n}`;
    const items = [script(turnOf(req.body as ResponsesBody))].flat().map((s, i) =>
      'tool' in s
        ? {
            type: 'function_call',
            id: `fc_${run}_${n}_${i}`,
            call_id: `call_${run}_${n}_${i}`,
            name: s.tool,
            ...(s.namespace ? { namespace: s.namespace } : {}),
            arguments: JSON.stringify(s.input),
          }
        : {
            type: 'message',
            role: 'assistant',
            id: `msg_${run}_${n}_${i}`,
            content: [{ type: 'output_text', text: s.text }],
          },
    );
    const event = <T extends { type: string }>(data: T): [string, unknown] => [data.type, data];
    return {
      status: 200,
      sse: [
        event({ type: 'response.created', response: { id } }),
        ...items.map((item, output_index) =>
          event({ type: 'response.output_item.done', output_index, item }),
        ),
        event({ type: 'response.completed', response: { id, usage: RESPONSES_USAGE } }),
      ],
    };
  });
  return { ...server, url: `${server.url}/v1` };
}
