/** `loopx doctor`: a new user's checklist, each problem with the command that fixes it. */
import type { Command } from 'commander';
import type { NotifyFacts } from '../../core/index';
import { channelHealth, doctor } from '../../core/index';
import { EXIT } from '../context';
import type { Act } from '../define';
import { example, runningCli } from '../define';
import { doctorText } from '../text/doctor';

/** The channels' health for the `notify` check, read here: setup does not depend on reach. */
function notifyFacts(configDir: string): NotifyFacts {
  try {
    return { channels: channelHealth(configDir) };
  } catch (e) {
    return { channels: [], problem: (e as Error).message };
  }
}

export function registerDoctorCommand(program: Command, act: Act) {
  example(
    program
      .command('doctor')
      .description(
        'check this setup: the CLI on PATH, Node.js, the workspace, its policy, the agent hooks, your keys, pinned approvers, git attributes and your notification channels; each problem with its fix. Writes nothing. Exits 0 when no check fails (warnings allowed), 1 when one does',
      )
      .action(
        act((ctx) => {
          const doc = doctor({
            entry: runningCli(),
            execPath: process.execPath,
            nodeVersion: process.versions.node,
            env: ctx.io.env,
            cwd: ctx.io.cwd,
            workspaceFlag: ctx.globals.workspace,
            configDir: ctx.configDir(),
            notify: notifyFacts(ctx.configDir()),
          });
          ctx.print(doc, () => doctorText(doc));
          return doc.ok ? EXIT.ok : EXIT.error;
        }),
      ),
    'loopx doctor',
    'loopx doctor --json | jq -r \'.checks[] | select(.status != "ok") | .fix\'',
  );
}
