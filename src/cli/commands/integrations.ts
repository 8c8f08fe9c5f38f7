/** How other programs reach LoopX: the status server (HTTP) and the MCP server (stdio); hooks.ts has the agent-host hooks. */
import type { Command } from 'commander';
import { LoopxError } from '../../core/index';
import type { Act } from '../define';
import { example, num, VERSION } from '../define';

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
      .option(
        '--login-link',
        'print a fresh one-time link (valid once, for 60 s) that opens the dashboard of the server already running on --port, and exit',
      )
      .action(
        act(
          async (
            ctx,
            o: {
              port: number;
              host: string;
              unsafeAllowNonLoopback?: boolean;
              printToken?: boolean;
              loginLink?: boolean;
            },
          ) => {
            const store = ctx.store();
            if (o.loginLink) {
              const { loginLinkFor } = await import('../../server/login-link');
              const link = await loginLinkFor(store, o.port);
              ctx.print(link, () => `Dashboard: ${link.url}  (valid once, for 60 s)`);
              return;
            }
            if (o.printToken) {
              const { readOrCreateToken, tokenFile } = await import('../../server/token');
              const token = readOrCreateToken(store);
              ctx.print({ schema: 'loopx.status-token/1', token, file: tokenFile(store) }, () => token);
              return;
            }
            // Its page shows every workspace listed on this machine: this one among them.
            store.register();
            const { startStatusServer } = await import('../../server/status-server');
            const server = await startStatusServer({
              workspace: store.workspace,
              store,
              port: o.port,
              host: o.host,
              allowUnsafeHost: o.unsafeAllowNonLoopback,
              log: (line) => ctx.io.stderr(`${line}\n`),
            }).catch((e: unknown) => {
              if (e instanceof LoopxError && e.reason === 'port_in_use')
                throw new LoopxError(
                  e.kind,
                  `port ${o.port} is in use: pick another with --port N, or --port 0 for a free one`,
                  e.details,
                );
              throw e;
            });
            const login = server.loginUrl();
            ctx.print(
              {
                schema: 'loopx.status-server/1',
                url: server.url,
                port: server.port,
                token: server.token,
                login_url: login,
              },
              () =>
                `LoopX status server on ${server.url}\ntoken: ${server.token}\n  curl -H "Authorization: Bearer ${server.token}" ${server.url}/status\nDashboard: ${login}  (valid once, for 60 s)\n  a new link: loopx status-server --login-link --port ${server.port}\n(Ctrl+C stops it)`,
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
    'loopx status-server --login-link --port 8080',
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
}
