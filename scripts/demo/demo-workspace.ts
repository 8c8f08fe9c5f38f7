/**
 * Prepares the demo workspace that `npm start` opens: a goal with todos, a pending gate and some
 * history (a finished run with evidence and a person's reward). Idempotent: an existing demo is
 * kept. Usage: node --import tsx scripts/demo/demo-workspace.ts [dir]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  Store,
  invoke,
  shouldRun,
  execUnderContract,
  summaryAll,
  newKeyPair,
  pinKey,
  signerFor,
} from '../../src/core/index';
import type { Signer } from '../../src/core/index';
import type { Actor } from '../../src/core/index';

const person: Actor = { kind: 'user', id: 'demo-user', channel: 'cli' };

/**
 * The demo person's key signs the demo's one reward. It is made here, pinned so that reward
 * counts, and its private half is never stored: nothing else can ever be signed with it.
 */
function demoSigner(store: Store): Signer {
  const { privateKey, pub } = newKeyPair('demo-user (demo key, private half discarded)', store.now());
  pinKey(store.configDir, pub);
  return signerFor(privateKey, pub.keyId, 'demo-user');
}
const agent: Actor = { kind: 'agent', id: 'demo-agent', channel: 'cli' };

export async function prepareDemo(dir: string): Promise<{ dir: string; goalId: string; configDir: string }> {
  fs.mkdirSync(dir, { recursive: true });
  const store = Store.init(dir);
  const existing = store.goalIds().find((id) => id.startsWith('refactor-payment-module'));
  if (existing) return { dir, goalId: existing, configDir: store.configDir };
  fs.writeFileSync(
    path.join(dir, 'README.md'),
    '# LoopX demo workspace\n\nA goal with todos, a pending gate and some history.\n',
  );
  const goalId = invoke(
    store,
    'goal.create',
    {
      goalId: 'refactor-payment-module',
      title: 'Refactor Payment Module',
      objective: 'Extract retry logic, add circuit breaker, update tests.',
      quota: {
        budgets: { turns: 20, tokens: 500000, costUsd: 5 },
        window: { kind: 'life' },
        cooldownSeconds: 0,
      },
    },
    person,
  ).goalId;
  const add = (input: Record<string, unknown>) => invoke(store, 'todo.add', { goalId, ...input }, person);
  add({
    todoId: 'inventory',
    title: 'List the retry call sites',
    priority: 'P1',
    action: 'echo "3 call sites found" > inventory.txt',
  });
  add({
    todoId: 'extract-retry',
    title: 'Extract retry logic into one module',
    priority: 'P1',
    dependsOn: ['inventory'],
  });
  add({ todoId: 'breaker', title: 'Add a circuit breaker', priority: 'P2', action: 'echo breaker' });
  add({
    todoId: 'deploy-staging',
    title: 'Deploy to staging',
    priority: 'P2',
    action: 'echo "deploying to staging"',
    gate: 'staging-deploy',
  });
  add({ todoId: 'review-api', title: 'Review the public API change', owner: 'user', priority: 'P1' });

  // One turn of history: a contract, its command, a summary and a person's reward.
  const c = shouldRun(store, { goalId, agent: 'demo-agent' }, agent);
  const first = c.interaction_contract.cli_channel.next_cli_actions[0];
  if (c.interaction_contract.id && first) {
    await execUnderContract(store, {
      contractId: c.interaction_contract.id,
      todoId: 'inventory',
      command: 'echo "3 call sites found" > inventory.txt',
      actor: agent,
    });
  }
  invoke(store, 'run.spend', { goalId, runId: c.run_id, tokens: 18250, costUsd: 0.21 }, agent);
  summaryAll(store, goalId, agent);
  invoke(
    store,
    'reward.add',
    {
      goalId,
      runId: c.run_id,
      score: 0.8,
      comment: 'Good inventory; keep the call sites list in the PR description.',
    },
    person,
    { signer: demoSigner(store) },
  );

  invoke(
    store,
    'goal.create',
    {
      goalId: 'docs-refresh',
      title: 'Refresh the onboarding docs',
      objective: 'Bring the getting-started guide up to date.',
    },
    person,
  );
  return { dir, goalId, configDir: store.configDir };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(__filename)) {
  const dir = path.resolve(process.argv[2] ?? '.loopx-demo');
  prepareDemo(dir).then((out) => console.log(JSON.stringify(out)));
}
