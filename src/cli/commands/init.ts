/** `loopx init`: the workspace itself. */
import type { Command } from 'commander';
import { Store } from '../../core/index';
import { example } from '../define';
import type { Act } from '../define';

export function registerInitCommand(program: Command, act: Act) {
  example(
    program
      .command('init')
      .description('create .loopx/ in the current folder, or the one --workspace names (idempotent)')
      .action(
        act((ctx) => {
          // Like `git init`: here (or the folder named), not the workspace found above.
          const store = Store.init(ctx.givenWorkspaceDir() ?? ctx.io.cwd, ctx.storeOptions());
          ctx.print(
            { schema: 'loopx.init/1', workspace: store.workspace, root: store.root },
            () => `LoopX workspace ready in ${store.root}`,
          );
        }),
      ),
    'loopx init',
  );
}
