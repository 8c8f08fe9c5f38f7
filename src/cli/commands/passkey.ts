/**
 * `loopx key passkey add`: a person registers a passkey for deciding from a browser (the status
 * server's `/decide`, docs/SECURITY.md "Deciding from a browser"). It takes the person's terminal
 * key, unlocked with its passphrase, to mint the one-time registration link: otherwise an agent
 * with a shell could register a passkey of its own and sign decisions with it.
 */
import type { Command } from 'commander';
import {
  forLogLine,
  keyNameProblem,
  refused,
  terminalKeys,
  unlockTerminalKey,
  usageError,
} from '../../core/index';
import type { Act } from '../define';
import { example, num } from '../define';
import { passphrase } from '../person';

export function registerPasskeyCommands(key: Command, act: Act): void {
  const passkey = example(
    key
      .command('passkey')
      .description('passkeys for deciding from a browser (the status server’s /decide page)'),
    'loopx key passkey add --name "Ada’s laptop" --port 8080',
  );
  example(
    passkey
      .command('add')
      .description(
        'print a one-time link (10 minutes) that registers a passkey at the status server on --port (a person: asks for your key’s passphrase)',
      )
      .option('--name <name>', 'what to call the passkey (default: your key’s name)')
      .option('--port <n>', 'the port of the status server running for this workspace', num('--port'), 8080)
      .action(
        act(async (ctx, o: { name?: string; port: number }) => {
          const store = ctx.store();
          const dir = ctx.configDir();
          const name = o.name?.trim();
          if (name !== undefined) {
            if (!name || name.length > 128) throw usageError('--name must be 1 to 128 characters');
            const problem = keyNameProblem(name);
            if (problem) throw usageError(`--name ${problem}`, { reason: 'bad_key_name' });
          }
          // The same checks as a login link: a server answers on the port, and it is this workspace's.
          const { loginLinkFor } = await import('../../server/login-link');
          await loginLinkFor(store, o.port);
          if (terminalKeys(dir).length === 0)
            throw refused(
              'adding a passkey takes your LoopX key, and this machine has none: run `loopx key create` once at a terminal, then this again',
              { reason: 'no_key' },
            );
          const signer = unlockTerminalKey(
            dir,
            passphrase(ctx, 'LoopX passphrase to add a passkey: ', 'add a passkey'),
          );
          const { mintPasskeyCode } = await import('../../server/passkey-codes');
          const named = name ?? signer.name;
          const { code, expiresAt } = mintPasskeyCode(signer, named);
          const url = `http://localhost:${o.port}/passkey/register?code=${code}`;
          ctx.print(
            {
              schema: 'loopx.passkey-link/1',
              url,
              name: named,
              expires_at: new Date(expiresAt).toISOString(),
            },
            () =>
              `Open this link in your browser on this machine (once, within 10 minutes) to add passkey "${forLogLine(named, 128)}":\n${url}\n` +
              'The passkey is bound to the host name localhost: decide at http://localhost:<port>/decide (any port forwarded to localhost works).',
          );
        }),
      ),
    'loopx key passkey add --port 8080',
    'loopx key passkey add --name "Ada’s phone" --port 8080 --passphrase-fd 3 3<passphrase.txt',
  );
}
