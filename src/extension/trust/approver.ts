/**
 * The person's key in VS Code: an Ed25519 key pair made on first use. The private half stays in
 * VS Code's SecretStorage, out of every agent's reach; the public half is pinned in the user's
 * LoopX config folder (so the person's own decisions count on this machine) and published in
 * `.loopx/approvers/` for teammates to pin.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import type * as vscode from 'vscode';
import type { Signer, Store } from '../../core/index';
import { pinKey, publicKeyFileFor, publishKey, signerFor } from '../../core/index';

const SECRET = 'loopx.approver.ed25519';

export class Approver {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly name: () => string,
  ) {}

  private async privateKeyPem(): Promise<string> {
    const existing = await this.secrets.get(SECRET);
    if (existing) return existing;
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await this.secrets.store(SECRET, pem);
    return pem;
  }

  /** The id of the editor's own key, or undefined before its first decision made one. */
  async keyId(): Promise<string | undefined> {
    const pem = await this.secrets.get(SECRET);
    if (!pem) return undefined;
    return publicKeyFileFor(createPrivateKey(pem), this.name(), '').keyId;
  }

  /**
   * The signer for a decision in `store`'s workspace. Our own key is pinned when missing: only
   * this extension holds its private half, so pinning it trusts nobody else. It is published for
   * teammates; nothing else is written (a decision signs the first policy: `invokeSigned`).
   */
  async signer(store: Store): Promise<Signer> {
    const key = createPrivateKey(await this.privateKeyPem());
    const pub = publicKeyFileFor(key, this.name(), store.now());
    if (!store.trust().key(pub.keyId)) pinKey(store.configDir, pub);
    publishKey(store.root, pub);
    return signerFor(key, pub.keyId, pub.name);
  }
}
