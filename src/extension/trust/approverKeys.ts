/**
 * Asks the person about a teammate's key published in `.loopx/approvers/` and not pinned here:
 * a notification naming it and its fingerprint, with Trust and Ignore. A published key counts on
 * this machine only once a person pins it (docs/TRUST.md), so Trust pins it after a modal
 * that repeats the fingerprint; Ignore remembers the key in this workspace. Each key is asked once
 * per session. `loopx approvers list|trust` is the same at a terminal.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PublicKeyFile } from '../../core/index';
import {
  approversDir,
  fileStamp,
  fingerprint,
  LOOPX_DIR,
  pinKey,
  plainText,
  publishedKeys,
  trustedDir,
} from '../../core/index';
import { guardTrust, reportFailure } from '../commands/shared';
import { Disposable } from '../common/disposable';
import type { LoopxFolder, LoopxWorkspaces } from '../workspace/workspaces';

/** Where the keys the person chose to ignore are kept (per workspace). */
const IGNORED = 'loopx.ignoredApproverKeys';

interface Offer {
  key: PublicKeyFile;
  folder: LoopxFolder;
}

export class ApproverKeyNotifier extends Disposable {
  /** Key ids asked (or decided) in this session: each is asked once. */
  private readonly asked = new Set<string>();
  /** Log lines already written (a bad file, an ignored key): each once per session. */
  private readonly logged = new Set<string>();
  private ownKeyId: string | undefined;
  /**
   * Per folder (by path), what its last scan saw: the approvers/ folder, the pinned keys, the
   * workspace trust and the ignored keys. A folder none of these changed in is not read again.
   */
  private readonly scanned = new Map<string, string>();
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly workspaces: LoopxWorkspaces,
    private readonly log: vscode.LogOutputChannel,
    /** Where Ignore is remembered: the extension's workspaceState. */
    private readonly memento: vscode.Memento,
    /** The editor's own key id (published by it, pinned when it first signs): never offered. */
    private readonly editorKey: () => Promise<string | undefined>,
  ) {
    super();
    // The workspace watcher covers `.loopx/**`, approvers/ included; the folders read below are
    // also looked at once a second, for the events a watcher misses.
    this._register(workspaces.onDidChange(() => this.scan()));
  }

  /** Key ids the person chose to ignore in this workspace. */
  ignoredKeyIds(): string[] {
    return this.memento.get<string[]>(IGNORED, []);
  }

  /** Looks for published keys not pinned here and asks about each new one (serialised). */
  scan(): Promise<void> {
    this.running = this.running
      .then(() => this.scanOnce())
      .catch((e) => this.log.error(`approver keys: ${(e as Error)?.message ?? e}`));
    return this.running;
  }

  private logOnce(key: string, line: () => string, level: 'info' | 'warn' = 'info'): void {
    if (this.logged.has(key)) return;
    this.logged.add(key);
    this.log[level](line());
  }

  private async scanOnce(): Promise<void> {
    const offers: Offer[] = [];
    try {
      this.ownKeyId ??= await this.editorKey();
    } catch (e) {
      this.logOnce(
        'own-key',
        () => `approver keys: the editor's own key is unreadable: ${(e as Error).message}`,
        'warn',
      );
    }
    const folders = this.workspaces.folders();
    for (const dir of new Set(folders.map((f) => trustedDir(f.store.configDir))))
      this.workspaces.markRead(dir);
    const ignoredIds = this.ignoredKeyIds();
    const ignored = new Set(ignoredIds);
    for (const folder of folders) {
      const dir = approversDir(folder.store.root);
      this.workspaces.markRead(dir);
      const trust = folder.store.trust();
      // Nothing to offer that was not offered (or logged) before unless a key was published or
      // removed, a key pinned, the workspace trusted, or a key ignored since the last look.
      const stamp = `${fileStamp(dir)}|${trust.fingerprint}|${vscode.workspace.isTrusted}|${ignoredIds.join(',')}`;
      const where = folder.folder.uri.fsPath;
      if (this.scanned.get(where) === stamp) continue;
      for (const key of publishedKeys(folder.store.root, (s) => this.skipped(folder, s))) {
        if (trust.key(key.keyId) || key.keyId === this.ownKeyId || this.asked.has(key.keyId)) continue;
        if (ignored.has(key.keyId)) {
          this.logOnce(
            `ignored|${key.keyId}`,
            () =>
              `approver key ${fingerprint(key.keyId)} (${plainText(key.name)}) in ${folder.folder.name}: not pinned, ignored earlier in this workspace (\`loopx approvers trust ${key.keyId.slice(0, 16)}\` pins it)`,
          );
          continue;
        }
        offers.push({ key, folder });
      }
      this.scanned.set(where, stamp);
    }
    if (offers.length === 0) return;
    if (!vscode.workspace.isTrusted) {
      // Asked again once the person trusts the workspace (that refreshes the workspaces).
      this.logOnce(
        `untrusted|${offers.map((o) => o.key.keyId).join(',')}`,
        () =>
          `${offers.length} published approver key(s) not pinned here: not offered in an untrusted workspace`,
      );
      return;
    }
    const level = vscode.workspace.getConfiguration('loopx').get<string>('notifications', 'all');
    for (const o of offers) {
      if (this.asked.has(o.key.keyId)) continue;
      this.asked.add(o.key.keyId);
      this.log.info(
        `approver key ${fingerprint(o.key.keyId)} (${plainText(o.key.name)}) is published in ${o.folder.folder.name}/${LOOPX_DIR}/approvers/ and not pinned on this machine${level === 'all' ? '' : ' (not asked: loopx.notifications is not "all")'}`,
      );
      if (level === 'all') void this.ask(o);
    }
  }

  /** A folder of keys or a file in it that does not check out: logged (once), never offered. */
  private skipped(
    folder: LoopxFolder,
    { file, why }: { file: string; why: 'not_a_folder' | 'not_a_key' },
  ): void {
    if (why === 'not_a_folder')
      this.logOnce(
        `notdir|${file}|${fileStamp(file)}`,
        () => `approver keys: ${file} is not a folder (a link is never followed): no key offered from it`,
        'warn',
      );
    else
      this.logOnce(
        `bad|${file}|${fileStamp(file)}`,
        () =>
          `approver keys: ${folder.folder.name}/${LOOPX_DIR}/approvers/${plainText(path.basename(file), 80)} is not a valid public key file (it must be {v, keyId, name, publicKey, createdAt}, named <keyId>.json, keyId the sha256 of the key): not offered`,
        'warn',
      );
  }

  private async ask({ key, folder }: Offer): Promise<void> {
    const name = plainText(key.name);
    const where = `${plainText(folder.folder.name, 80)}/${LOOPX_DIR}/approvers/`;
    const fp = fingerprint(key.keyId);
    const choice = await vscode.window.showInformationMessage(
      `A new approver key "${name}" was published in ${where} (fingerprint ${fp}). Trust it only if you know it is ${name}'s key: checked with them on another channel.`,
      'Trust',
      'Ignore',
    );
    try {
      if (choice === 'Trust') await this.trust(key, folder, name, where);
      else if (choice === 'Ignore') {
        const ignored = this.ignoredKeyIds();
        if (!ignored.includes(key.keyId)) await this.memento.update(IGNORED, [...ignored, key.keyId]);
        this.log.info(
          `approver key ${fp} (${name}) ignored in this workspace: not pinned, not asked again (\`loopx approvers trust ${key.keyId.slice(0, 16)}\` pins it later)`,
        );
      }
    } catch (e) {
      reportFailure(this.log, `approver key ${fp}`, e);
    }
  }

  /** The person's Trust: confirmed in a modal that repeats the fingerprint, then pinned. */
  private async trust(key: PublicKeyFile, folder: LoopxFolder, name: string, where: string): Promise<void> {
    await guardTrust();
    const fp = fingerprint(key.keyId);
    const detail =
      `Fingerprint: ${fp}\nKey id: ${key.keyId}\nPublished in ${where} (created ${plainText(key.createdAt, 40)})\n\n` +
      `Gate approvals and rejections, rewards and quota grants signed with this key will count on this machine, in every workspace. ` +
      `Anyone who can write to the workspace, an agent included, can publish a key under any name: trust it only if ${name} gave you this fingerprint on another channel.`;
    const confirm = await vscode.window.showWarningMessage(
      `Trust the approver key "${name}" (fingerprint ${fp})?`,
      { modal: true, detail },
      'Trust',
    );
    if (confirm !== 'Trust') {
      this.log.info(`approver key ${fp} (${name}) not trusted: the confirmation was dismissed`);
      return;
    }
    pinKey(folder.store.configDir, key);
    this.log.info(`pinned approver key ${fp} (${name}): decisions it signs count on this machine`);
    // Which decisions count changed: the store rebuilds what it computed under the old keys.
    this.workspaces.refreshNow();
  }
}
