/**
 * Whose decisions count in this workspace, on this clone: the keys pinned on this machine, the
 * workspace's identity (read again when its file changes), and the policy a person signed.
 */
import * as path from 'node:path';
import type { Policy } from '../model';
import type { PolicyView, Signer, Trust } from '../trust';
import { PinnedTrust, policyFiles, PolicyViewCache, signWorkspacePolicy } from '../trust';
import { fileStamp } from './file-stamp';
import type { WorkspaceIdentity } from './workspace-identity';
import { isRegistered, registerWorkspace } from './workspace-registry';
import {
  ensureWorkspaceIdentity,
  IDENTITY_FILE,
  pinWorkspaceIdentity,
  readWorkspaceIdentity,
} from './workspace-identity';

export class WorkspaceTrust {
  private readonly pinned: PinnedTrust;
  private readonly policies = new PolicyViewCache();
  private identityMemo?: { stamp: string; identity: WorkspaceIdentity };
  private registered = false;

  constructor(
    private readonly root: string,
    private readonly secretsDir: string,
    private readonly configDir: string,
  ) {
    this.pinned = new PinnedTrust(configDir);
  }

  trust(): Trust {
    return this.pinned.current(this.identity().id);
  }

  identity(): WorkspaceIdentity {
    const stamp = fileStamp(path.join(this.root, IDENTITY_FILE));
    if (this.identityMemo?.stamp !== stamp)
      this.identityMemo = { stamp, identity: readWorkspaceIdentity(this.root, this.secretsDir) };
    return this.identityMemo.identity;
  }

  /**
   * Pins the workspace's identity on this clone before it first writes; with `make`, gives a
   * workspace an older LoopX made its identity (before a person first signs in it).
   */
  ensureIdentity(make: boolean): void {
    const now = this.identity();
    if (!(now.pinned || (!now.id && !make))) {
      if (now.id) pinWorkspaceIdentity(this.root, this.secretsDir);
      else ensureWorkspaceIdentity(this.root, this.secretsDir);
      this.identityMemo = undefined;
    }
    this.register();
  }

  /**
   * Lists the workspace in the config folder's registry (store/workspace-registry.ts) the first
   * time this process writes to it: one `stat` a process once it is listed.
   */
  register(): void {
    if (this.registered) return;
    this.registered = true;
    const workspace = path.dirname(this.root);
    if (isRegistered(this.configDir, workspace)) return;
    registerWorkspace(this.configDir, workspace, this.identity().id, new Date().toISOString());
  }

  policyView(): PolicyView {
    const trust = this.trust();
    return this.policies.view(policyFiles(this.root, this.configDir, trust.workspace), trust);
  }

  signPolicy(signer: Signer | undefined, now: Date, shown?: Policy): PolicyView {
    this.ensureIdentity(signer !== undefined);
    const trust = this.trust();
    return signWorkspacePolicy(
      policyFiles(this.root, this.configDir, trust.workspace),
      signer,
      trust,
      now,
      shown,
    );
  }
}
