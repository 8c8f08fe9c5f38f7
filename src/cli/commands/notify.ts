/**
 * `loopx notify`: the channels that tell the person outside the editor when a gate, a lane or a
 * budget needs them (docs/NOTIFICATIONS.md). They live in the user's config folder; these
 * commands change them there, send now, or keep sending until stopped.
 */
import type { Command } from 'commander';
import { Argument } from 'commander';
import * as path from 'node:path';
import type { NotifySendDoc } from '../../core/index';
import {
  addWebhook,
  checkWebhook,
  DESKTOP_CHANNEL,
  forgetChannel,
  notifyChannelsDoc,
  readChannels,
  removeWebhook,
  sendDue,
  sendTest,
  startNotifier,
  updateChannels,
  urlProblem,
  usageError,
} from '../../core/index';
import type { CliContext } from '../context';
import { EXIT } from '../context';
import type { Act } from '../define';
import { example } from '../define';
import { notifyChannelsText, notifySendText } from '../text/notify';

function printChannels(ctx: CliContext, lead?: string) {
  const doc = notifyChannelsDoc(ctx.configDir());
  ctx.print(doc, () => [...(lead ? [lead, ''] : []), notifyChannelsText(doc)].join('\n'));
}

/** Runs the sender in this process until SIGINT or SIGTERM; each delivery goes to stderr. */
async function watch(ctx: CliContext): Promise<number> {
  const configDir = ctx.configDir();
  // A file that does not read is reported now, not only in the log of a sender left running.
  const { exists, file } = readChannels(configDir);
  if (!exists)
    ctx.note(
      `no ${path.basename(file)} yet (${file}): nothing is sent until you add a channel; watching for it`,
    );
  const notifier = startNotifier({
    configDir,
    env: ctx.io.env,
    log: (line) => ctx.io.stderr(`loopx notify: ${line}\n`),
    onPass: (doc) => ctx.json && ctx.io.stdout(`${JSON.stringify(doc)}\n`),
  });
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await notifier.close();
  return EXIT.ok;
}

function whereAmI(ctx: CliContext): { name: string; path: string } {
  let dir: string | undefined;
  try {
    dir = ctx.workspaceDir();
  } catch {
    dir = undefined;
  }
  const at = dir ?? ctx.io.cwd;
  return { name: path.basename(at) || at, path: at };
}

export function registerNotifyCommands(program: Command, act: Act) {
  const notify = example(
    program
      .command('notify')
      .description(
        'tell you outside the editor when a gate, a lane or a budget needs you: a desktop notification and webhooks (generic JSON, Slack, ntfy), set up in your config folder',
      ),
    'loopx notify add --name phone --kind ntfy --url https://ntfy.sh/my-loopx-topic',
    'loopx notify list',
  );
  example(
    notify
      .command('list')
      .description('the channels set up, and whether each is failing (its last error and when)')
      .action(act((ctx) => printChannels(ctx))),
    'loopx notify list',
    'loopx notify list --json | jq -r \'.channels[] | select(.status == "failing") | .name\'',
  );
  example(
    notify
      .command('add')
      .description(
        'add a webhook: generic (a JSON body), slack (a Slack-compatible message) or ntfy (its topic URL)',
      )
      .requiredOption('--name <name>', 'what you call it (an id: letters, digits, - and _)')
      .requiredOption('--kind <kind>', 'generic, slack or ntfy')
      .requiredOption('--url <url>', 'where to post (http or https); for ntfy the topic URL')
      .action(
        act((ctx, o: { name: string; kind: string; url: string }) => {
          const w = checkWebhook(o);
          updateChannels(ctx.configDir(), (c) => addWebhook(c, w));
          printChannels(
            ctx,
            `added ${w.kind} channel ${w.name}: try it with loopx notify test --name ${w.name}`,
          );
        }),
      ),
    'loopx notify add --name team --kind slack --url "$SLACK_WEBHOOK_URL"',
    'loopx notify add --name phone --kind ntfy --url https://ntfy.sh/my-loopx-topic',
    'loopx notify add --name ops --kind generic --url https://ops.example.com/loopx',
  );
  example(
    notify
      .command('remove')
      .description('remove a webhook and what was recorded of its sending')
      .requiredOption('--name <name>', 'the webhook')
      .action(
        act((ctx, o: { name: string }) => {
          updateChannels(ctx.configDir(), (c) => removeWebhook(c, o.name));
          forgetChannel(ctx.configDir(), o.name);
          printChannels(ctx, `removed channel ${o.name}`);
        }),
      ),
    'loopx notify remove --name team',
  );
  example(
    notify
      .command('desktop')
      .description('turn desktop notifications on or off (notify-send on Linux, osascript on macOS)')
      .addArgument(new Argument('<state>', 'on or off').choices(['on', 'off']))
      .action(
        act((ctx, state: 'on' | 'off') => {
          updateChannels(ctx.configDir(), (c) => ({ ...c, desktop: state === 'on' }));
          if (state === 'off') forgetChannel(ctx.configDir(), DESKTOP_CHANNEL);
          printChannels(ctx, `desktop notifications ${state}`);
        }),
      ),
    'loopx notify desktop on',
    'loopx notify desktop off',
  );
  example(
    notify
      .command('link-base <url>')
      .description(
        'the status server address the links in notices point at (default http://localhost:8080): /decide/... for a gate, /all otherwise',
      )
      .action(
        act((ctx, url: string) => {
          const problem = urlProblem(url);
          if (problem)
            throw usageError(`link base ${JSON.stringify(url)} ${problem}`, {
              field: 'url',
              reason: 'bad_url',
            });
          updateChannels(ctx.configDir(), (c) => ({ ...c, link_base: url }));
          printChannels(ctx, `links now start with ${url}`);
        }),
      ),
    'loopx notify link-base http://localhost:8080',
    'loopx notify link-base https://loopx.my-machine.example',
  );
  example(
    notify
      .command('test')
      .description(
        'send a test notice now to every channel (or one) and say what happened; exits 1 when one failed',
      )
      .option('--name <name>', 'only this channel')
      .action(
        act(async (ctx, o: { name?: string }) => {
          const doc = await sendTest({
            configDir: ctx.configDir(),
            env: ctx.io.env,
            name: o.name,
            where: whereAmI(ctx),
          });
          ctx.print(doc, () => notifySendText(doc));
          return doc.failed.length ? EXIT.error : EXIT.ok;
        }),
      ),
    'loopx notify test',
    'loopx notify test --name phone',
  );
  example(
    notify
      .command('send')
      .description('one pass: send every notice not yet sent whose attempt is due, then exit 0 (for cron)')
      .action(
        act(async (ctx) => {
          const doc: NotifySendDoc = await sendDue({ configDir: ctx.configDir(), env: ctx.io.env });
          ctx.print(doc, () => notifySendText(doc));
        }),
      ),
    'loopx notify send',
    '*/5 * * * * loopx notify send --json >> ~/.local/state/loopx-notify.log',
  );
  example(
    notify
      .command('watch')
      .description(
        'keep sending until stopped (Ctrl-C): a pass now and whenever a workspace changes; `loopx drive` does this too',
      )
      .action(act((ctx) => watch(ctx))),
    'loopx notify watch',
    'loopx notify watch --json',
  );
}
