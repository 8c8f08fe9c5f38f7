/**
 * A governed workspace for the agent tests, made the way a person makes one with the built CLI: a
 * git repository with a little code, `loopx init`, a goal with a command todo and a gated one,
 * and (for Claude Code) the hooks installed by `loopx hooks install`, LoopX's own installer.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { Store } from '../../../src/core/store/store';
import type { GoalState, LoopxEvent } from '../../../src/core/index';
import { json, loopx, loopxAsPerson, ok } from '../cli';
import { tempDir } from './agent-kit';

export const GOAL = 'ship';
/** The command todo's action: a script of the repository that leaves a file when it ran. */
export const CHECK = './check.sh';
export const DEPLOY = './deploy.sh staging';

export interface Governed {
  ws: string;
  /** The environment every process of the test gets: this workspace's own LoopX config folder. */
  env: Record<string, string>;
  run(...args: string[]): ReturnType<typeof loopx>;
  state(): GoalState;
  events(): LoopxEvent[];
}

function git(ws: string, ...args: string[]) {
  const r = spawnSync('git', ['-c', 'user.name=dev', '-c', 'user.email=dev@example.com', ...args], {
    cwd: ws,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/**
 * A repository with README.md, src/app.js, check.sh and deploy.sh, a goal `ship` with the todo
 * `check` (runs ./check.sh) and `deploy` (./deploy.sh staging, behind the gate `staging`), and
 * budgets as given. `hooks`: run `loopx hooks install` in it. `only: 'check'`: the goal has the
 * `check` todo alone, so the turn that runs it completes the goal.
 */
export async function governedWorkspace(
  name: string,
  o: { tokens?: number; hooks?: boolean; only?: 'check' } = {},
): Promise<Governed> {
  const ws = tempDir(name);
  const env = { LOOPX_CONFIG_DIR: tempDir(`${name}-config`) };
  fs.writeFileSync(path.join(ws, 'README.md'), '# Payments\n\nThe payment module of the shop.\n');
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src', 'app.js'), 'export const pay = (n) => n * 100;\n');
  fs.writeFileSync(
    path.join(ws, 'check.sh'),
    '#!/bin/sh\necho "checked at $(date)" > checked.txt\necho "all checks passed"\n',
    { mode: 0o755 },
  );
  fs.writeFileSync(path.join(ws, 'deploy.sh'), '#!/bin/sh\necho "deployed to $1" > deployed.txt\n', {
    mode: 0o755,
  });
  git(ws, 'init', '-q');
  git(ws, 'add', '.');
  git(ws, 'commit', '-q', '-m', 'initial');
  const run = (...args: string[]) => loopx(args, { cwd: ws, env });
  ok(await run('init'));
  ok(
    await run(
      'project_prompt',
      'create',
      '--goal-id',
      GOAL,
      '--title',
      'Ship payments',
      '--description',
      'Check and deploy.',
    ),
  );
  const todo = (id: string, title: string, ...more: string[]) =>
    run('todo', 'add', '--goal-id', GOAL, '--todo-id', id, '--title', title, ...more);
  ok(await todo('check', 'Run the checks', '--action', CHECK, '--priority', 'P1'));
  if (o.only !== 'check')
    ok(await todo('deploy', 'Deploy to staging', '--action', DEPLOY, '--gate', 'staging'));
  if (o.tokens !== undefined) ok(await run('quota', 'set', '--goal-id', GOAL, '--tokens', String(o.tokens)));
  if (o.hooks) ok(await run('hooks', 'install', '--yes'));
  const store = () => Store.open(ws, { configDir: env.LOOPX_CONFIG_DIR });
  return {
    ws,
    env,
    run,
    state: () => store().load(GOAL).state,
    events: () => store().readLog(GOAL).events,
  };
}

/** A person edits policy.json and signs it with their key (`loopx policy sign`, passphrase on fd 3). */
export async function signPolicy(g: Governed, change: Record<string, unknown>): Promise<void> {
  const file = path.join(g.ws, '.loopx', 'policy.json');
  const policy = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...policy, ...change }, null, 2) + '\n');
  ok(await loopxAsPerson(['policy', 'sign'], { cwd: g.ws, env: g.env }));
  const shown = json(
    await loopx(['--json', 'policy', 'show'], { cwd: g.ws, env: g.env }),
    z.object({ state: z.string() }).passthrough(),
  );
  if (shown.state !== 'signed') throw new Error(`the policy is ${shown.state} after signing`);
}

/** The contract JSON in a tool's output (a shell command's, an MCP tool's, Codex's wrapped output). */
export function contractIn(text: string | undefined): {
  decision: string;
  run_id?: string;
  reasons: string[];
  interaction_contract: { id: string; cli_channel: { next_cli_actions: string[] } };
} {
  if (!text) throw new Error('no tool output to read a contract from');
  const start = text.indexOf('{');
  if (start < 0) throw new Error(`no JSON in the tool output:\n${text}`);
  const parsed = JSON.parse(text.slice(start, text.lastIndexOf('}') + 1)) as Record<string, unknown>;
  // Claude Code shows the model an MCP tool's structured content (`{ result }`) when there is one.
  const doc = (parsed.interaction_contract ? parsed : parsed.result) as Record<string, unknown> | undefined;
  if (!doc?.interaction_contract) throw new Error(`no contract in the tool output:\n${text.slice(0, 2000)}`);
  return doc as unknown as ReturnType<typeof contractIn>;
}
