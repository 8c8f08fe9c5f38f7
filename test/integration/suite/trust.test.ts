/**
 * Teammates' keys in a real VS Code host: a key published in `.loopx/approvers/` and not pinned
 * here is offered once, with its fingerprint, as Trust / Ignore; Trust pins it after a modal (and
 * the decisions it signed start to count), Ignore is remembered, and workspace text in the
 * notification stays plain text.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, until, withStub, workspaceDir } from './util';
import {
  Store,
  approversDir,
  fingerprint,
  invoke,
  newKeyPair,
  pinKey,
  pinnedKeys,
  publishKey,
  signerFor,
  trustedDir,
} from '../../../src/core/index';

const GOAL = 'refactor-payment-module';
/** VS Code's own pattern for a link in a notification message (vs/base/common/linkedText.ts). */
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;

interface Asked {
  msg: string;
  items: string[];
}

/** Records every information message; `answer` picks the button, like a person would. */
function infoStub(asked: Asked[], answer: (msg: string, items: string[]) => string | undefined) {
  return (async (msg: string, ...items: string[]) => {
    asked.push({ msg, items });
    return answer(msg, items);
  }) as unknown as typeof vscode.window.showInformationMessage;
}

function configDir(): string {
  const dir = process.env.LOOPX_CONFIG_DIR;
  assert.ok(dir, 'the integration run sets LOOPX_CONFIG_DIR (scripts/test/own-config-dir.mjs)');
  return dir;
}

const isPinned = (keyId: string) => pinnedKeys(configDir()).some((k) => k.keyId === keyId);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function registerTrustTests(): void {
  describe('LoopX approver keys in VS Code', function () {
    it("offers a teammate's newly published key with its fingerprint; Trust and the modal pin it, and its signed approval counts", async () => {
      const a = await api();
      const store = new Store(workspaceDir());
      assert.equal(store.configDir, configDir());
      const { privateKey, pub } = newKeyPair('Grace Hopper', store.now());
      const fp = fingerprint(pub.keyId);
      // On Grace's machine her key is pinned: she approves a gate, and the line reaches our log.
      const graceConfig = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-grace-'));
      try {
        invoke(
          store,
          'gate.request',
          { goalId: GOAL, gateId: 'key-check', reason: 'needs a teammate' },
          { kind: 'agent', id: 'test-agent', channel: 'cli' },
        );
        pinKey(graceConfig, pub);
        const grace = new Store(workspaceDir(), { configDir: graceConfig });
        invoke(
          grace,
          'gate.approve',
          { goalId: GOAL, gateId: 'key-check' },
          { kind: 'user', id: 'grace', channel: 'cli' },
          { signer: signerFor(privateKey, pub.keyId, pub.name) },
        );
        const before = store.load(GOAL).state;
        assert.equal(before.gates.find((g) => g.id === 'key-check')!.status, 'pending');
        assert.ok(
          (before.ignored ?? []).some((i) => /not pinned on this machine/.test(i.reason)),
          'the approval is in the log without effect here',
        );

        const asked: Asked[] = [];
        const modals: { msg: string; opts: vscode.MessageOptions; items: string[] }[] = [];
        await withStub(
          'showWarningMessage',
          (async (msg: string, opts: vscode.MessageOptions, ...items: string[]) => {
            modals.push({ msg, opts, items });
            return opts?.modal && opts.detail?.includes(fp) ? 'Trust' : undefined;
          }) as unknown as typeof vscode.window.showWarningMessage,
          () =>
            withStub(
              'showInformationMessage',
              infoStub(asked, (msg, items) =>
                msg.includes(fp) && items.includes('Trust') ? 'Trust' : undefined,
              ),
              async () => {
                publishKey(store.root, pub);
                await until(
                  `the key pinned (asked: ${JSON.stringify(asked.map((x) => x.msg))})`,
                  () => isPinned(pub.keyId),
                  15_000,
                );
              },
            ),
        );
        const offers = asked.filter((x) => x.msg.includes(fp));
        assert.equal(offers.length, 1, 'asked once');
        const folder = vscode.workspace.workspaceFolders![0]!.name;
        assert.equal(
          offers[0]!.msg,
          `A new approver key "Grace Hopper" was published in ${folder}/.loopx/approvers/ (fingerprint ${fp}). Trust it only if you know it is Grace Hopper's key: checked with them on another channel.`,
        );
        assert.deepEqual(offers[0]!.items, ['Trust', 'Ignore']);
        assert.equal(modals.length, 1, 'one confirmation');
        assert.equal(modals[0]!.msg, `Trust the approver key "Grace Hopper" (fingerprint ${fp})?`);
        assert.equal(modals[0]!.opts.modal, true);
        assert.match(modals[0]!.opts.detail ?? '', new RegExp(`Fingerprint: ${fp}\\nKey id: ${pub.keyId}`));
        assert.deepEqual(modals[0]!.items, ['Trust']);
        assert.ok(fs.existsSync(path.join(trustedDir(configDir()), `${pub.keyId}.json`)));

        // Grace's approval, already in the log, counts now.
        const after = store.load(GOAL).state;
        const gate = after.gates.find((g) => g.id === 'key-check')!;
        assert.equal(gate.status, 'approved');
        assert.equal(gate.decidedBy?.id, 'grace');
        // Pinned: never offered again, even in a new scan.
        const again: Asked[] = [];
        await withStub(
          'showInformationMessage',
          infoStub(again, () => undefined),
          async () => {
            await a.approverKeys.scan();
            await sleep(300);
          },
        );
        assert.ok(!again.some((x) => x.msg.includes(fp)));
      } finally {
        fs.rmSync(graceConfig, { recursive: true, force: true });
        // Grace's store wrote the snapshot with her own snapshot key: write ours again.
        store.rebuildSnapshot(GOAL);
      }
    });

    it('Ignore leaves a key unpinned, remembers it in the workspace, and does not ask again after a refresh', async () => {
      const a = await api();
      const store = new Store(workspaceDir());
      const { pub } = newKeyPair('Someone Else', store.now());
      const fp = fingerprint(pub.keyId);
      const asked: Asked[] = [];
      await withStub(
        'showInformationMessage',
        infoStub(asked, (msg, items) =>
          msg.includes(fp) && items.includes('Ignore') ? 'Ignore' : undefined,
        ),
        async () => {
          publishKey(store.root, pub);
          await until('the key ignored', () => a.approverKeys.ignoredKeyIds().includes(pub.keyId), 15_000);
          a.workspaces.refreshNow();
          await sleep(1500); // the refresh, and a round of the poll
          await a.approverKeys.scan();
        },
      );
      assert.equal(asked.filter((x) => x.msg.includes(fp)).length, 1, 'asked once');
      assert.equal(isPinned(pub.keyId), false);
      assert.ok(!fs.existsSync(path.join(trustedDir(configDir()), `${pub.keyId}.json`)));
    });

    it('shows a published name with a link in it as plain text, and never offers a key file that does not check out', async () => {
      const a = await api();
      const store = new Store(workspaceDir());
      const name = 'Mallory [x](command:loopx.approveGate) `rm` "q"' + ' padding'.repeat(5);
      const { pub } = newKeyPair(name, store.now());
      const fp = fingerprint(pub.keyId);
      const dir = approversDir(store.root);
      // Files that must never be offered: bad JSON, a wrong shape, a key id that is not its key's.
      const fakeId = 'ab'.repeat(32);
      const other = newKeyPair('Impostor', store.now()).pub;
      // A real key whose name breaks the text rules (bidi, a bell), written by hand: invalid.
      const escaped = newKeyPair('Bell \u202e"q"\u0007', store.now()).pub;
      const asked: Asked[] = [];
      const modals: string[] = [];
      await withStub(
        'showWarningMessage',
        (async (msg: string) => {
          modals.push(msg);
          return undefined;
        }) as unknown as typeof vscode.window.showWarningMessage,
        () =>
          withStub(
            'showInformationMessage',
            infoStub(asked, () => undefined),
            async () => {
              fs.writeFileSync(path.join(dir, 'not-a-key.json'), '{"v":1,');
              fs.writeFileSync(
                path.join(dir, `${'cd'.repeat(32)}.json`),
                JSON.stringify({ v: 1, name: 'Broken' }),
              );
              fs.writeFileSync(path.join(dir, `${fakeId}.json`), JSON.stringify({ ...other, keyId: fakeId }));
              fs.writeFileSync(path.join(dir, `${escaped.keyId}.json`), JSON.stringify(escaped));
              publishKey(store.root, pub);
              await until('the notification', () => asked.find((x) => x.msg.includes(fp)), 15_000);
              a.workspaces.refreshNow();
              await sleep(1500);
            },
          ),
      );
      const msg = asked.find((x) => x.msg.includes(fp))!.msg;
      assert.ok(!VSCODE_LINK.test(msg), `no link in ${JSON.stringify(msg)}`);
      assert.ok(
        !/[[\]`\u202e\u0007]/.test(msg),
        `no link syntax or control character in ${JSON.stringify(msg)}`,
      );
      assert.ok(msg.includes('"Mallory x command:loopx.approveGate rm q padding'), msg);
      const shown = /key "([^"]*)"/.exec(msg)![1]!;
      assert.ok(shown.length <= 61 && shown.endsWith('…'), `the name is capped: ${shown}`);
      assert.ok(!asked.some((x) => /Broken|Impostor|not-a-key/.test(x.msg)), JSON.stringify(asked));
      assert.ok(!asked.some((x) => x.msg.includes(fingerprint(fakeId))));
      assert.ok(
        !asked.some((x) => x.msg.includes(fingerprint(escaped.keyId))),
        'an invalid name is not offered',
      );
      assert.deepEqual(modals, [], 'no decision was made');
      assert.equal(isPinned(pub.keyId), false);
      for (const f of [
        'not-a-key.json',
        `${'cd'.repeat(32)}.json`,
        `${fakeId}.json`,
        `${escaped.keyId}.json`,
        `${pub.keyId}.json`,
      ])
        fs.rmSync(path.join(dir, f), { force: true });
    });

    it('an unsigned edit of policy.json has no effect, raises the Sign notification, and applies once the person signs the diff', async () => {
      const a = await api();
      const store = new Store(workspaceDir());
      const original = fs.readFileSync(store.policyPath);
      const ttlBefore = store.policy().contractTtlMinutes ?? 30;
      const loosened = ttlBefore + 90;
      const notes: { msg: string; items: string[] }[] = [];
      const modals: { msg: string; opts: vscode.MessageOptions; items: string[] }[] = [];
      let answerModal: string | undefined = undefined;
      const warn = (async (msg: string, ...rest: unknown[]) => {
        const opts = rest[0] as vscode.MessageOptions | string | undefined;
        if (typeof opts === 'object' && opts?.modal) {
          modals.push({ msg, opts, items: rest.slice(1) as string[] });
          return answerModal;
        }
        notes.push({ msg, items: rest as string[] });
        return /policy\.json .* has changes no person signed/.test(msg) ? 'Review and Sign' : undefined;
      }) as unknown as typeof vscode.window.showWarningMessage;
      try {
        await withStub('showWarningMessage', warn, async () => {
          // An agent raises the contract lifetime: nothing changes until a person signs.
          fs.writeFileSync(store.policyPath, JSON.stringify({ v: 1, contractTtlMinutes: loosened }, null, 2));
          await until('the Sign notification and its modal', () => modals.length > 0, 15_000);
          assert.equal(store.policy().contractTtlMinutes ?? 30, ttlBefore, 'the unsigned edit has no effect');
          assert.deepEqual(store.policyView().unsigned, ['contractTtlMinutes']);
          const note = notes.find((n) => /policy\.json/.test(n.msg))!;
          assert.match(
            note.msg,
            /has changes no person signed \(contractTtlMinutes\)\. Until you sign them they have no effect/,
          );
          assert.deepEqual(note.items, ['Review and Sign', 'Show Diff']);
          // The diff was opened before the question: policy in force against the edit.
          const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
          assert.ok(
            tabs.some(
              (t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'loopx-policy',
            ),
            `a diff tab is open: ${tabs.map((t) => t.label).join(', ')}`,
          );
          assert.match(modals[0]!.msg, /^Sign policy\.json in .* as shown in the diff\?$/);
          assert.match(modals[0]!.opts.detail ?? '', /Signing makes these changes apply: contractTtlMinutes/);
          // The modal was dismissed: nothing signed. Signing again through the command, answered Sign.
          assert.equal(store.policyView().state === 'signed', false);
          answerModal = 'Sign';
          await vscode.commands.executeCommand('loopx.signPolicy', { folder: workspaceDir() });
        });
        const v = store.policyView();
        assert.equal(v.state, 'signed');
        assert.equal(store.policy().contractTtlMinutes, loosened);
        assert.equal(modals.length, 2, 'each signature asked in a modal');
      } finally {
        fs.writeFileSync(store.policyPath, original);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        a.workspaces.refreshNow();
      }
    });
  });
}
