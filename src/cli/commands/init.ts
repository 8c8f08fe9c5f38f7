/** `loopx init`: the workspace itself. */
import type { Command } from 'commander';
import { Store, terminalKeys } from '../../core/index';
import type { Act } from '../define';
import { example } from '../define';

export function registerInitCommand(program: Command, act: Act) {
  example(
    program
      .command('init')
      .description('create .loopx/ in the current folder, or the one --workspace names (idempotent)')
      .action(
        act((ctx) => {
          // Like `git init`: here (or the folder named), not the workspace found above.
          const store = Store.init(ctx.givenWorkspaceDir() ?? ctx.io.cwd, ctx.storeOptions());
          // Not a prompt: scripts run init. The person makes a key once, which also signs the policy.
          const hasKey = terminalKeys(ctx.configDir()).length > 0;
          ctx.print(
            { schema: 'loopx.init/1', workspace: store.workspace, root: store.root, person_key: hasKey },
            () =>
              `LoopX workspace ready in ${store.root}` +
              (hasKey
                ? ''
                : '\nNext, as the person who approves: `loopx key create` makes your signing key (in a terminal; it asks for a passphrase) and signs this policy.'),
          );
        }),
      ),
    'loopx init',
  );
}
