/** How other programs reach LoopX: the status server (HTTP), the MCP server (stdio) and agent host hooks. */
import type { Command } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HOOK_EVENTS,
  HOOK_SHIM,
  HookPayload,
  deny,
  preToolUse,
  sessionStart,
  stop,
  quote,
  usageError,
  applyHooks,
  planHooks,
  writeHookShim,
} from '../../core/index';
import type { Actor, HookAnswer } from '../../core/index';
import { VERSION, example, num } from '../define';
import type { Act } from '../define';

export function registerIntegrationCommands(program: Command, act: Act) {
  example(
    program
      .command('status-server')
      .description('serve the status read-only over HTTP on 127.0.0.1 (bearer token, GET only) until stopped')
      .option('--port <n>', 'port (0 picks a free one)', num('--port'), 8080)
      .option('--host <host>', 'address to bind', '127.0.0.1')
      .option(
        '--unsafe-allow-non-loopback',
        'allow binding an address other than loopback (exposes the status beyond this machine)',
      )
      .option(
        '--print-token',
        'print the bearer token (kept in the LoopX config folder, outside the workspace) and exit',
      )
      .action(
        act(
          async (
            ctx,
            o: { port: number; host: string; unsafeAllowNonLoopback?: boolean; printToken?: boolean },
          ) => {
            const store = ctx.store();
            if (o.printToken) {
              const { readOrCreateToken, tokenFile } = await import('../../server/token');
              const token = readOrCreateToken(store);
              ctx.print({ schema: 'loopx.status-token/1', token, file: tokenFile(store) }, () => token);
              return;
            }
            const { startStatusServer } = await import('../../server/status-server');
            const server = await startStatusServer({
              workspace: store.workspace,
              store,
              port: o.port,
              host: o.host,
              allowUnsafeHost: o.unsafeAllowNonLoopback,
              log: (line) => ctx.io.stderr(`${line}\n`),
            });
            ctx.print(
              { schema: 'loopx.status-server/1', url: server.url, port: server.port, token: server.token },
              () =>
                `LoopX status server on ${server.url}\ntoken: ${server.token}\n  curl -H "Authorization: Bearer ${server.token}" ${server.url}/status\n(Ctrl+C stops it)`,
            );
            await new Promise<void>((resolve) => {
              const stop = () => void server.close().then(resolve);
              process.once('SIGINT', stop);
              process.once('SIGTERM', stop);
            });
          },
        ),
      ),
    'loopx status-server --port 8080',
  );

  example(
    program
      .command('mcp')
      .description(
        'run the LoopX MCP server over stdio (agent tools and status resources; nothing human-only)',
      )
      .option(
        '--agent <name>',
        'who the agent is, as the person names it (default: LOOPX_AGENT, else the MCP client’s name plus a session id)',
      )
      .action(
        act(async (ctx, o: { agent?: string }) => {
          const { serveMcp } = await import('../../server/mcp');
          await serveMcp(ctx.store(), {
            version: VERSION,
            agent: ctx.givenAgent(o.agent),
          });
        }),
      ),
    'claude mcp add loopx -- loopx mcp',
  );
  example(
    program
      .command('hook')
      .description('answer an agent host’s hook event (JSON on stdin): pre-tool-use, session-start, stop')
      .argument('<event>', 'pre-tool-use | session-start | stop')
      .option('--agent <name>', 'the agent name (default: LOOPX_AGENT or "agent")')
      .option('--goal-id <id>', 'the goal (default: LOOPX_GOAL, or the only active goal)')
      .action(
        act(async (ctx, event: string, o: { agent?: string; goalId?: string }) => {
          const { io } = ctx;
          const normalized = event
            .replace(/([a-z])([A-Z])/g, '$1-$2')
            .toLowerCase()
            .replace(/_/g, '-');
          if (!(HOOK_EVENTS as readonly string[]).includes(normalized))
            throw usageError(`unknown hook event ${quote(event)}: use ${HOOK_EVENTS.join(', ')}`);
          const answerWith = (answer: HookAnswer) => {
            io.stdout(JSON.stringify(answer.output) + '\n');
            if (answer.reason) io.stderr(answer.reason + '\n');
            return answer.exitCode;
          };
          // A guard that cannot read its input, or find the workspace, must not wave a tool through.
          const refuse = (why: string) => answerWith(deny(`LoopX: ${why}; refusing`));
          let payload: HookPayload;
          try {
            const raw = await (io.readStdin?.() ?? Promise.resolve(''));
            if (!raw.trim()) throw new Error('standard input is empty');
            const json: unknown = JSON.parse(raw);
            const parsed = HookPayload.safeParse(json);
            if (!parsed.success) throw new Error('the hook input is not a JSON object');
            payload = parsed.data;
          } catch (e) {
            if (normalized === 'pre-tool-use')
              return refuse(`cannot read the hook input (${(e as Error).message.slice(0, 200)})`);
            throw usageError(`cannot read the hook input: ${(e as Error).message.slice(0, 200)}`);
          }
          const goalId = o.goalId ?? (io.env.LOOPX_GOAL || undefined);
          const sessionId =
            payload.session_id ?? (typeof payload.sessionId === 'string' ? payload.sessionId : undefined);
          let answer;
          try {
            // --agent that is not LOOPX_AGENT is refused (agent_mismatch): inside the try, so that
            // pre-tool-use answers it with a denial.
            const agent = ctx.agentName(o.agent);
            const actor: Actor = { kind: 'agent', id: agent, channel: 'hook' };
            const store = ctx.store();
            // The CLI's own parser reads `loopx` commands for the hook (loaded only here).
            const { parseLoopx } = normalized === 'pre-tool-use' ? await import('../parse-loopx') : {};
            answer =
              normalized === 'pre-tool-use'
                ? preToolUse(store, payload, {
                    parseLoopx: parseLoopx!,
                    env: io.env,
                    cwd: io.cwd,
                    agent: ctx.givenAgent(o.agent),
                  })
                : normalized === 'session-start'
                  ? sessionStart(store, { goalId, agent }, actor)
                  : stop(store, { goalId, agent, sessionId }, actor);
          } catch (e) {
            if (normalized === 'pre-tool-use') return refuse((e as Error).message);
            throw e;
          }
          return answerWith(answer);
        }),
      ),
    'echo \'{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}\' | loopx hook pre-tool-use',
  );

  const hooks = example(
    program.command('hooks').description('agent-host hooks for this workspace'),
    'loopx hooks install',
  );
  example(
    hooks
      .command('install')
      .description(
        'write the hook shim into the LoopX config folder and the hooks that call it: .github/hooks/loopx.json (VS Code) and .claude/settings.local.json (Claude Code)',
      )
      .option('--dry-run', 'show what would be written; write nothing')
      .action(
        act((ctx, o: { dryRun?: boolean }) => {
          const store = ctx.store();
          const dir = path.join(ctx.configDir(), 'bin');
          // The CLI running now (bin/loopx.js through a PATH link, or dist/cli.js), by its real path.
          const entry = process.argv[1] ?? '';
          const cli = entry && fs.existsSync(entry) ? fs.realpathSync(entry) : path.resolve(entry);
          const shim = path.join(dir, HOOK_SHIM);
          const plan = planHooks(store.workspace, shim);
          const changes = plan.files.filter((f) => f.before !== f.after);
          if (!o.dryRun) writeHookShim(dir, { node: process.execPath, cli });
          const written = o.dryRun ? [] : applyHooks({ files: changes });
          ctx.print(
            {
              schema: 'loopx.hooks-install/1',
              shim,
              cli,
              dry_run: !!o.dryRun,
              files: changes.map((f) => ({ path: f.path, after: f.after })),
              written,
            },
            () =>
              [
                `${o.dryRun ? 'would write' : 'wrote'} the hook shim ${shim} (runs ${cli})`,
                ...(changes.length
                  ? changes.map((f) => `${o.dryRun ? 'would write' : 'wrote'} ${f.path}`)
                  : ['the hooks are already installed']),
              ].join('\n'),
          );
        }),
      ),
    'loopx hooks install --dry-run',
  );
}
