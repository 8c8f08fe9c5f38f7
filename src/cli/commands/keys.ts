/**
 * `loopx key` and `loopx approvers`: the person's own keys, and which teammates' keys count on
 * this machine. A decision counts only when signed by a pinned key (docs/TRUST.md).
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import type { OnSkippedKey, PublicKeyFile } from '../../core/index';
import {
  createTerminalKey,
  fingerprint,
  forLogLine,
  keyNameProblem,
  notFound,
  pinKey,
  pinnedKeys,
  publishedKeys,
  publishKey,
  signFirstPolicy,
  Store,
  terminalKeys,
  usageError,
} from '../../core/index';
import type { CliContext } from '../context';
import { safeUser } from '../context';
import type { Act } from '../define';
import { example } from '../define';
import { passphrase, person } from '../person';
import { registerPasskeyCommands } from './passkey';

/**
 * A key's text as a terminal shows it: the one rule for text (a name in `.loopx/approvers/` was
 * checked when read; the person's own keys and pins are shown escaped, never raw).
 */
const shown = (s: string) => forLogLine(s, 128);

function keyJson<E extends object>(k: PublicKeyFile, extra: E = {} as E) {
  return {
    key_id: k.keyId,
    fingerprint: fingerprint(k.keyId),
    name: k.name,
    created_at: k.createdAt,
    ...extra,
  };
}

/** The workspace's store when there is one: a new key is published there for teammates. */
function storeIfAny(ctx: CliContext): Store | undefined {
  const dir = ctx.workspaceDir();
  return dir ? Store.open(dir, ctx.storeOptions()) : undefined;
}

export function registerKeyCommands(program: Command, act: Act) {
  const key = example(
    program.command('key').description('your LoopX signing keys: a decision counts only when you sign it'),
    'loopx key create --name "Ada Lovelace"',
    'loopx key list',
  );
  registerPasskeyCommands(key, act);
  example(
    key
      .command('create')
      .description('make a signing key, encrypted with a passphrase, and pin it on this machine')
      .option('--name <name>', 'who you are, as teammates will see it (default: your user name)')
      .action(
        act((ctx, o: { name?: string }) => {
          const dir = ctx.configDir();
          const name = (o.name ?? safeUser()).trim();
          if (!name || name.length > 128) throw usageError('--name must be 1 to 128 characters');
          const problem = keyNameProblem(name);
          if (problem) throw usageError(`--name ${problem}`, { reason: 'bad_key_name' });
          const first = passphrase(ctx, 'New LoopX passphrase (8+ characters): ', 'key create');
          if (ctx.globals.passphraseFd === undefined) {
            const again = passphrase(ctx, 'Again: ', 'key create');
            if (again !== first)
              throw usageError('the two passphrases differ: nothing was made', {
                reason: 'passphrase_mismatch',
              });
          }
          const { key: k, signer } = createTerminalKey(dir, name, first, new Date().toISOString());
          const store = storeIfAny(ctx);
          if (store) publishKey(store.root, k);
          const policy = store && signFirstPolicy(store, signer);
          ctx.print(
            {
              schema: 'loopx.key/1',
              ...keyJson(k, { pinned: true, published: !!store }),
              ...(policy ? { policy } : {}),
            },
            () =>
              `made key ${fingerprint(k.keyId)} (${shown(k.name)}), pinned on this machine${store ? `; published in ${store.root}/approvers/ for teammates` : ''}.\n` +
              `Your decisions (gate approve/reject, reward add, quota grant, policy sign) now ask for its passphrase.` +
              (policy === 'signed'
                ? '\nSigned the workspace policy (policy.json): from now on an edit to it counts once you sign it.'
                : policy === 'review'
                  ? '\npolicy.json has changes no person signed: review them with `loopx policy show`, then `loopx policy sign`.'
                  : ''),
          );
        }),
      ),
    'loopx key create --name "Ada Lovelace"',
    'loopx key create --passphrase-fd 3 3<passphrase.txt',
  );
  example(
    key
      .command('list')
      .description('your signing keys on this machine')
      .action(
        act((ctx) => {
          const keys = terminalKeys(ctx.configDir());
          ctx.print(
            keys.map((k) => keyJson(k)),
            () =>
              keys
                .map((k) => `${fingerprint(k.keyId)}  ${shown(k.name)}  made ${shown(k.createdAt)}`)
                .join('\n') || 'no keys: run `loopx key create`',
          );
        }),
      ),
    'loopx key list --json',
  );

  const approvers = example(
    program.command('approvers').description('whose signed decisions count on this machine'),
    'loopx approvers list',
    'loopx approvers trust 3f2a9c10',
  );
  example(
    approvers
      .command('list')
      .description('keys published in the workspace and keys pinned here')
      .action(
        act((ctx) => {
          const dir = ctx.configDir();
          const pinned = new Map(pinnedKeys(dir).map((k) => [k.keyId, k]));
          const store = storeIfAny(ctx);
          // A file that is no key is named, escaped, never shown as one (its text may be anything).
          const skipped: Parameters<OnSkippedKey>[0][] = [];
          const published = store ? publishedKeys(store.root, (s) => skipped.push(s)) : [];
          const invalid = skipped.map(
            (s) =>
              `invalid     ${shown(store ? path.relative(store.workspace, s.file) : s.file)}: ${s.why === 'not_a_folder' ? 'not a plain folder' : 'not a valid key file'} (ignored)`,
          );
          const rows = [
            ...published.map((k) => keyJson(k, { published: true, pinned: pinned.has(k.keyId) })),
            ...[...pinned.values()]
              .filter((k) => !published.some((p) => p.keyId === k.keyId))
              .map((k) => keyJson(k, { published: false, pinned: true })),
          ];
          ctx.print(
            rows,
            () =>
              [
                ...rows.map(
                  (r) =>
                    `${r.pinned ? 'pinned    ' : 'NOT pinned'}  ${r.fingerprint}  ${shown(r.name)}${r.published ? '' : '  (not in this workspace)'}`,
                ),
                ...invalid,
              ].join('\n') || 'no approver keys: run `loopx key create`',
          );
        }),
      ),
    'loopx approvers list --json',
  );

  example(
    approvers
      .command('trust')
      .description('pin a teammate’s published key: their signed decisions count here (a person)')
      .argument('<key-id>', 'the key id or its first 8+ hex digits, as `loopx approvers list` shows it')
      .action(
        act((ctx, keyId: string) => {
          const wanted = keyId.replace(/\s+/g, '').toLowerCase();
          if (!/^[0-9a-f]{8,64}$/.test(wanted))
            throw usageError(
              `<key-id> must be 8 to 64 hex digits, not ${JSON.stringify(keyId.slice(0, 80))}`,
            );
          const store = storeIfAny(ctx);
          const matches = (store ? publishedKeys(store.root) : []).filter((k) => k.keyId.startsWith(wanted));
          if (matches.length === 0)
            throw notFound(`no published key ${wanted} in this workspace's .loopx/approvers/`, {
              reason: 'no_such_key',
            });
          if (matches.length > 1)
            throw usageError(`${wanted} matches ${matches.length} keys: give more digits`);
          const k = matches[0]!;
          // Trusting a key is a person's decision: it takes the person's own key to make it.
          person(
            ctx,
            `trust key ${fingerprint(k.keyId)} (${shown(k.name)})`,
            'Trust in the LoopX new-key notification',
          );
          pinKey(ctx.configDir(), k);
          ctx.print(
            { schema: 'loopx.key/1', ...keyJson(k, { pinned: true, published: true }) },
            () =>
              `pinned ${fingerprint(k.keyId)} (${shown(k.name)}): decisions it signs count on this machine`,
          );
        }),
      ),
    'loopx approvers trust 3f2a9c10',
  );
}
