/**
 * Signed approvals: an Ed25519 key pair made on first use. The private key stays in VS Code's
 * SecretStorage; the public key is written to `.loopx/approvers/` so anyone with the workspace
 * can check an approval made in VS Code.
 */
import type * as vscode from 'vscode';
import { generateKeyPairSync, createPrivateKey, createPublicKey } from 'node:crypto';
import { writeApproverKey, signApproval, keyIdOf } from '../core/index';
import type { Store, Gate, ApprovalSignatureT } from '../core/index';

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

  /** Signs an approval of `gate` and makes sure the store has our public key. */
  async sign(
    store: Store,
    goalId: string,
    gate: Gate,
    note: string | undefined,
  ): Promise<ApprovalSignatureT> {
    const pem = await this.privateKeyPem();
    const key = createPrivateKey(pem);
    const publicPem = createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string;
    const keyId = keyIdOf(publicPem);
    writeApproverKey(store, { keyId, name: this.name(), publicKey: publicPem });
    return signApproval(key, keyId, goalId, gate, note);
  }
}
