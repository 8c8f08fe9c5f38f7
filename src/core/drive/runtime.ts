/**
 * A lane's runtime as a process to start: the signed policy's declaration (a preset or an argument
 * list), filled in with this turn's contract, and the environment that gives the turn its lane's
 * identity. Arguments are filled in whole and never pass through a shell, so nothing in a goal's
 * text can become a second command.
 */
import type { Contract, GoalState, Policy, Runtime } from '../model';
import { refused } from '../model';
import type { ShouldRunOutput } from '../views';

/** Minutes a turn may take when its runtime does not say. */
export const DEFAULT_TURN_MINUTES = 30;

/**
 * The presets: Claude Code in print mode may use its shell only for `loopx exec` and the contract's
 * finish command (the contract's own checks then decide); Codex runs `codex exec` with the person's
 * own Codex configuration (its sandbox and approval settings).
 */
export const RUNTIME_PRESETS: Record<NonNullable<Runtime['preset']>, readonly string[]> = {
  'claude-code': [
    'claude',
    '-p',
    '--output-format',
    'json',
    '--allowedTools',
    'Bash(loopx exec:*)',
    'Bash(loopx summary_all:*)',
    '--',
    '{prompt}',
  ],
  codex: ['codex', 'exec', '--skip-git-repo-check', '--', '{prompt}'],
};

/** The runtime `name` as the policy in force declares it: an unsigned one does not exist here. */
export function signedRuntime(policy: Policy, name: string): Runtime {
  const r = policy.runtimes?.[name];
  if (!r)
    throw refused(
      `no runtime ${name} in the signed policy: declare it under "runtimes" in .loopx/policy.json and sign it (\`loopx policy sign\`); what programs run is a person's decision`,
      { reason: 'runtime_not_signed', runtime: name },
    );
  return r;
}

export interface TurnFacts {
  lane: string;
  agent: string;
  workspace: string;
  /** Where the runtime works: the workspace, or the lane's worktree. */
  cwd: string;
  goal: GoalState;
  contract: Contract;
  answer: ShouldRunOutput;
  contractFile: string;
}

/** What the runtime is told: the goal, and exactly what this turn's contract lets it run. */
export function turnPrompt(f: TurnFacts): string {
  const c = f.answer.interaction_contract;
  const actions = c.cli_channel.next_cli_actions;
  const judgment = f.contract.judgment.map((id) => f.goal.todos.find((t) => t.id === id)).filter((t) => !!t);
  const lines = [
    `You are "${f.lane}", an agent lane LoopX runs on goal ${f.goal.id}: ${f.goal.title}.`,
    f.goal.objective ? `Objective: ${f.goal.objective.slice(0, 2000)}` : '',
    `Your contract for this turn is ${c.id}, until ${c.expires_at}.`,
  ];
  if (actions.length) {
    lines.push('Run exactly these commands, each as written, one at a time, with your shell tool:');
    actions.forEach((a, i) => lines.push(`${i + 1}. ${a}`));
  }
  for (const t of judgment)
    lines.push(
      `Todo ${t.id} ("${t.title}") is yours to do by judgment; when it is done, run: loopx todo done --goal-id ${f.goal.id} --todo-id ${t.id} --contract ${c.id} --summary "<what you did>"`,
    );
  lines.push(
    'Run nothing else that changes anything: LoopX refuses what the contract does not list.',
    `When you are done, run: ${c.agent_channel.finish_with ?? `loopx summary_all --goal-id ${f.goal.id} --contract ${c.id}`}`,
    `The contract as JSON: ${f.contractFile}`,
  );
  return lines.filter(Boolean).join('\n');
}

/** The runtime's argument list with this turn's facts filled in. */
export function runtimeArgv(runtime: Runtime, f: TurnFacts): string[] {
  const template = runtime.command ?? RUNTIME_PRESETS[runtime.preset!];
  const values: Record<string, string> = {
    prompt: turnPrompt(f),
    contract_file: f.contractFile,
    contract_id: f.contract.id,
    goal_id: f.goal.id,
    lane: f.lane,
    workspace: f.workspace,
    cwd: f.cwd,
  };
  return template.map((arg) => arg.replace(/\{([a-z_]+)\}/g, (m, k: string) => values[k] ?? m));
}

/**
 * The runtime's environment: the driver's own without any LOOPX_ variable but the config folder
 * (a lane never inherits another identity), the runtime's declared variables, and the lane's.
 */
export function runtimeEnv(runtime: Runtime, f: TurnFacts, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base))
    if (!k.startsWith('LOOPX_') || k === 'LOOPX_CONFIG_DIR') env[k] = v;
  return {
    ...env,
    ...runtime.env,
    LOOPX_AGENT: f.agent,
    LOOPX_LANE: f.lane,
    LOOPX_WORKSPACE: f.workspace,
    LOOPX_GOAL: f.goal.id,
    LOOPX_CONTRACT: f.contract.id,
  };
}

export const turnMinutes = (r: Runtime) => r.turnTimeoutMinutes ?? DEFAULT_TURN_MINUTES;
