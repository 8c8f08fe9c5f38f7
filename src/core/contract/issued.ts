/**
 * A contract once issued: the payload its signature covers, checking that signature, and finding
 * it again by id.
 */
import { timingSafeEqual } from 'node:crypto';
import * as path from 'node:path';
import { signPayload } from '../capabilities';
import type { Contract, GoalState, LoopxError, Policy, Run } from '../model';
import { Contract as ContractSchema, policyTtlMinutes, refused } from '../model';
import type { Store } from '../store';
import { canonicalJson, mkdirStore, readStoreFile, writeStoreFile } from '../store';
import { assertOwnContract } from '../trust';

/**
 * Why a contract lasts longer than the policy allows (expires - issued above contractTtlMinutes),
 * or undefined. Issuing caps the lifetime, so such a contract was minted by hand (with a leaked
 * key) or under a looser policy: it authorises nothing now.
 */
export function contractTooLong(
  c: Pick<Contract, 'issuedAt' | 'expiresAt'>,
  policy: Policy,
): string | undefined {
  const limit = policyTtlMinutes(policy);
  const lifetime = Date.parse(c.expiresAt) - Date.parse(c.issuedAt);
  if (Number.isFinite(lifetime) && lifetime <= limit * 60_000) return undefined;
  const minutes = Number.isFinite(lifetime)
    ? `${Math.round((lifetime / 60_000) * 10) / 10} minutes`
    : 'an unreadable time';
  return `it lasts ${minutes} (issued ${c.issuedAt}, expires ${c.expiresAt}), longer than the policy's contractTtlMinutes (${limit})`;
}

export function contractPayload(c: Omit<Contract, 'sig'> | Contract): string {
  const { sig: _sig, ...rest } = c as Contract;
  return canonicalJson(rest);
}

export function contractSignatureValid(store: Store, c: Contract): boolean {
  const expected = Buffer.from(signPayload(store, contractPayload(c)), 'hex');
  const got = Buffer.from(c.sig, 'hex');
  return expected.length === got.length && timingSafeEqual(expected, got);
}

/**
 * The run `contractId` opened in `goal` (replayed from the logs) and its contract, once the
 * contract is shown to be this clone's (a contract binds the writer that issued it: after a pull,
 * another clone's open run is there to see, not to act on), untampered, and the caller's own when
 * the caller (`agent`) is known. `missing` is the error when the goal has no such contract.
 * Whether the run may still act (open, unexpired) is the caller's question.
 */
export function authenticContract(
  store: Store,
  goal: GoalState,
  contractId: string,
  agent: string | undefined,
  missing: () => LoopxError,
): { run: Run; contract: Contract } {
  const run = goal.runs.find((r) => r.contract?.id === contractId);
  if (!run?.contract) throw missing();
  const contract = ContractSchema.parse(run.contract);
  const cid = contract.id;
  const issuer = contract.writer ?? run.writer;
  if (issuer !== undefined && issuer !== store.writerId()) {
    throw refused(
      `contract ${cid} was issued on another clone of this workspace (writer ${issuer}): a contract authorises work only where it was issued; get one here with \`loopx quota should-run --goal-id ${goal.id}\``,
      { contractId: cid, reason: 'contract_other_clone' },
    );
  }
  if (!contractSignatureValid(store, contract) || contract.runId !== run.id || contract.goalId !== goal.id) {
    throw refused(
      `contract ${cid} fails signature verification: it was altered after it was issued, or signed with a key that is not this workspace's`,
      { contractId: cid, reason: 'contract_signature_invalid' },
    );
  }
  assertOwnContract(contract, agent);
  return { run, contract };
}

// ---------------------------------------------------------------------------------------------
// Finding a contract by id: a small pointer file in `local/`, with a scan as the fallback
// (a contract issued on another clone of the workspace).

function pointerPath(store: Store, contractId: string) {
  return path.join(store.localDir, 'contracts', `${contractId}.goal`);
}
export function rememberContract(store: Store, c: Contract) {
  const file = pointerPath(store, c.id);
  store.ensureLocalDir();
  mkdirStore(path.dirname(file), 0o700);
  writeStoreFile(file, c.goalId);
}

/**
 * The goal that holds contract `contractId`, read by `read` (checkContract replays it from the
 * logs, the truth), or undefined when none does. The pointer names the goal, so only that one is
 * read; without it (a contract issued on another clone) the goals are scanned through their
 * snapshots, and the one found is read again by `read`.
 */
export function findContractGoal(
  store: Store,
  contractId: string,
  read: (goalId: string) => GoalState,
): GoalState | undefined {
  const holds = (goal: GoalState) => goal.runs.some((r) => r.contract?.id === contractId);
  try {
    const goal = read(readStoreFile(pointerPath(store, contractId), 'utf8').trim());
    if (holds(goal)) return goal;
  } catch {
    /* no pointer, or one to a goal that cannot be read: scan */
  }
  for (const id of store.goalIds()) {
    let found = false;
    try {
      found = holds(store.load(id).state);
    } catch {
      /* a broken goal cannot hold a usable contract */
    }
    // Read outside the guard: a log found damaged here is the caller's error to report.
    if (found) return read(id);
  }
  return undefined;
}
