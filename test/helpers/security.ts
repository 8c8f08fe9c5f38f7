/**
 * What the security tests share: a workspace with its own LoopX config folder, driven through the
 * BUILT command (`node bin/loopx.js`, see test/cli/helpers.ts), and the tools an agent with a
 * shell has: reading and appending files under `.loopx/`, making links, computing an HMAC.
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson } from '../../src/core/store/json-file';
import { loopx, ok, PASSPHRASE, tempDir } from './cli';
import type { Result } from './cli';
import { appendChained, writerLog } from './log-kit';

export { removeTempDirs, tempDir, ok, fails, loopx } from './cli';
export type { Result } from './cli';

/** A workspace and a config folder of its own, both fresh. */
export class Sandbox {
  readonly dir = tempDir('loopx-sec-ws-');
  readonly config = tempDir('loopx-sec-config-');

  /** `loopx args...` in the workspace, as an agent (no terminal), with this config folder. */
  run(args: string[], env: Record<string, string> = {}): Promise<Result> {
    return loopx(args, { cwd: this.dir, env: { LOOPX_CONFIG_DIR: this.config, ...env } });
  }

  async json(args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const r = await this.run(['--json', ...args], env);
    assert.equal(r.code, 0, `loopx ${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  }

  /** Run options for the CLI helpers (`loopxTty`, `loopxAsPerson`): this workspace and config folder. */
  opts(): { cwd: string; env: Record<string, string> } {
    return { cwd: this.dir, env: { LOOPX_CONFIG_DIR: this.config } };
  }

  /** `loopx todo add` in goal `goalId` (as an agent): the todo id, title and more flags. */
  addTodo(goalId: string, todoId: string, title: string, more: string[] = []) {
    return this.json(['todo', 'add', '--goal-id', goalId, '--todo-id', todoId, '--title', title, ...more]);
  }

  file(...parts: string[]): string {
    return path.join(this.dir, ...parts);
  }

  /** A goal `g` with one todo `t` whose action is `action`; returns the todo id. */
  async goalWithTodo(action = 'echo listed', goalId = 'g'): Promise<string> {
    await this.json(['goal', 'create', '--goal-id', goalId, '--title', 'Target']);
    const out = await this.json(['todo', 'add', '--goal-id', goalId, '--title', 'Work', '--action', action]);
    const id = (out.todo as { id?: string } | undefined)?.id ?? (out.id as string | undefined);
    assert.ok(id, `todo add printed no id: ${JSON.stringify(out)}`);
    return id;
  }

  /** The only workspace folder of the config folder: where this workspace's secrets are. */
  secretsDir(): string {
    const root = path.join(this.config, 'workspaces');
    const names = fs.existsSync(root) ? fs.readdirSync(root) : [];
    assert.equal(
      names.length,
      1,
      `expected one workspace folder in ${root}, found ${names.join(', ') || 'none'}`,
    );
    return path.join(root, names[0]!);
  }

  /** A secret of this workspace as the config folder holds it (hex text). */
  secretHex(name: string): string {
    return fs.readFileSync(path.join(this.secretsDir(), name), 'utf8').trim();
  }
}

/** Every regular file under `dir` (links are not followed). */
/** A workspace with goal g, todo `deploy` (action `echo deployed`) behind gate prod, and a person's key. */
export async function gatedSandbox(): Promise<Sandbox> {
  const sb = new Sandbox();
  await sb.json(['goal', 'create', '--goal-id', 'g', '--title', 'Target']);
  await sb.addTodo('g', 'deploy', 'Deploy', ['--action', 'echo deployed', '--gate', 'prod']);
  ok(
    await loopx(['key', 'create', '--name', 'alice', '--passphrase-fd', '0'], {
      cwd: sb.dir,
      env: { LOOPX_CONFIG_DIR: sb.config },
      input: `${PASSPHRASE}\n`,
    }),
  );
  return sb;
}

export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  (function walk(d: string) {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  })(dir);
  return out;
}

/** A contract as `loopx quota should-run` would issue it, signed with `key` (any key). */
export function mintContract(
  key: Buffer,
  c: {
    goalId: string;
    todoId: string;
    command: string;
    agent?: string;
    issuedAt?: Date;
    lifetimeMinutes?: number;
  },
) {
  const issued = c.issuedAt ?? new Date(Date.now() - 1000);
  const unsigned = {
    v: 1 as const,
    id: `c-${randomBytes(5).toString('hex')}`,
    goalId: c.goalId,
    runId: `run-${randomBytes(4).toString('hex')}`,
    agent: c.agent ?? 'agent',
    issuedAt: issued.toISOString(),
    expiresAt: new Date(issued.getTime() + (c.lifetimeMinutes ?? 30) * 60_000).toISOString(),
    actions: [{ todoId: c.todoId, command: c.command }],
    judgment: [] as string[],
  };
  const sig = createHmac('sha256', key).update(canonicalJson(unsigned)).digest('hex');
  return { ...unsigned, sig };
}

/**
 * Appends an event to this clone's log of a goal, chained the way LoopX chains its own lines (next seq, sha256
 * of the previous line, the last line's writer and version): what an agent with a shell can write
 * by hand. `ev` gives the type and data, and may override any envelope field (actor, sig, ...).
 */
export function appendByHand(
  sb: Sandbox,
  goalId: string,
  ev: { type: string; data: unknown } & Record<string, unknown>,
): void {
  appendChained(writerLog(sb.dir, goalId), ev);
}

/** Appends a `run.started` event carrying `contract` to the goal's log, by hand (appendByHand). */
export function appendRunStarted(sb: Sandbox, goalId: string, contract: ReturnType<typeof mintContract>) {
  appendByHand(sb, goalId, {
    actor: { kind: 'agent', id: contract.agent, channel: 'cli' },
    type: 'run.started',
    data: { run: { id: contract.runId, agent: contract.agent, contract } },
  });
}

/** The `loopx exec` line for a contract's first action, as an executor would run it. */
export function execArgs(contract: ReturnType<typeof mintContract>): string[] {
  const a = contract.actions[0]!;
  return ['exec', '--contract', contract.id, '--todo', a.todoId, '--', a.command];
}
