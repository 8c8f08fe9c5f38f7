/** `loopx workspaces`: every workspace LoopX has touched on this machine, and what each needs of you. */
import type { Command } from 'commander';
import * as path from 'node:path';
import { forgetWorkspace, needsYou, WORKSPACES_SCHEMA } from '../../core/index';
import type { Act } from '../define';
import { example } from '../define';
import { workspacesText } from '../text';

export function registerWorkspacesCommands(program: Command, act: Act) {
  const workspaces = example(
    program
      .command('workspaces')
      .description('every workspace LoopX has touched on this machine (listed in the config folder)')
      .action(
        act((ctx) => {
          const all = needsYou({ configDir: ctx.configDir() });
          const doc = { schema: WORKSPACES_SCHEMA, workspaces: all.workspaces, pruned: all.pruned };
          ctx.print(doc, () => workspacesText(doc.workspaces, doc.pruned));
        }),
      ),
    'loopx workspaces',
    'loopx workspaces --json | jq -r ".workspaces[].path"',
  );
  example(
    workspaces
      .command('forget')
      .description(
        'take a workspace off the list (its .loopx/ is left as it is; it is listed again when LoopX next writes there)',
      )
      .argument('<dir>', 'the workspace folder')
      .action(
        act((ctx, dir: string) => {
          const target = path.resolve(dir);
          const was = forgetWorkspace(ctx.configDir(), target);
          ctx.print({ schema: 'loopx.workspace-forget/1', path: target, forgotten: was }, () =>
            was ? `forgot ${target}` : `${target} was not listed`,
          );
        }),
      ),
    'loopx workspaces forget ~/src/old-project',
  );
}
