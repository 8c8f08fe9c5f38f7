/**
 * One lane kept going: ask for its contract, do what the answer says (a turn, or sleep until
 * something that can change it happens), and write down where it is before each step, so that a
 * driver started after a crash knows what was running.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openTurn } from '../contract';
import type { Actor, Contract } from '../model';
import { LoopxError } from '../model';
import { shellQuote } from '../shell';
import type { Store } from '../store';
import { writeJsonAtomic } from '../store';
import type { LaneStep } from './lane-step';
import { afterAsking, beforeAsking, byNextSlot, turnFailed } from './lane-step';
import type { LaneSpec, LaneState } from './lanes';
import { laneAgent, laneFiles, laneLogFile, readLane, readLaneState, writeLaneState } from './lanes';
import type { TurnFacts } from './runtime';
import { runtimeArgv, runtimeEnv, signedRuntime, turnMinutes } from './runtime';
import type { TurnEnding } from './turn-end';
import { keepWorktreeWork, renewLeases, settleTurn } from './turn-end';
import type { TurnProcess } from './turn-process';
import { startTurnProcess } from './turn-process';
import type { GoalWatch } from './wake';
import { watchGoal } from './wake';
import { ensureWorktree } from './worktree';

export interface DriveEvent {
  lane: string;
  kind: 'turn_started' | 'turn_ended' | 'asleep' | 'waiting_person' | 'stopped' | 'recovered' | 'error';
  message: string;
}

export interface LaneRunnerOptions {
  store: Store;
  /** The environment runtimes start from (the driver's own). */
  env: NodeJS.ProcessEnv;
  /** A folder holding a `loopx` that runs this driver's own CLI, put first on the lanes' PATH. */
  binDir?: string;
  leaseSeconds: number;
  emit: (e: DriveEvent) => void;
}

export class LaneRunner {
  private stopped = false;
  private proc?: TurnProcess;
  private readonly watch: GoalWatch;
  readonly agent: string;
  /** Settles when the lane's loop ended (stop(), or the lane removed). */
  readonly done: Promise<void>;

  constructor(
    private spec: LaneSpec,
    private readonly o: LaneRunnerOptions,
  ) {
    this.agent = laneAgent(spec.name);
    this.watch = watchGoal(o.store, spec.goalId);
    this.done = this.loop().finally(() => this.watch.close());
  }

  /** Ends the loop; a turn in progress is stopped and its run ended `interrupted`. */
  stop(): Promise<void> {
    this.stopped = true;
    this.proc?.stop();
    this.watch.close();
    return this.done;
  }

  /** Ends the lane's sleep now: it asks for its contract again. */
  poke(): void {
    this.watch.poke();
  }

  private now = () => new Date(this.o.store.now());

  private setState(change: Partial<LaneState>): LaneState {
    const { store } = this.o;
    const state: LaneState = {
      ...readLaneState(store, this.spec.name, this.now()),
      ...change,
      updatedAt: this.now().toISOString(),
    };
    for (const k of Object.keys(change) as (keyof LaneState)[]) if (change[k] === undefined) delete state[k];
    writeLaneState(store, this.spec.name, state);
    return state;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        this.spec = readLane(this.o.store, this.spec.name);
      } catch {
        this.setState({
          status: 'stopped',
          why: 'the lane was removed',
          until: undefined,
          needsPerson: false,
        });
        return;
      }
      let step: LaneStep;
      try {
        step = await this.next();
      } catch (e) {
        const message = e instanceof LoopxError || e instanceof Error ? e.message : String(e);
        step = { kind: 'sleep', status: 'waiting_person', why: message, needsPerson: true };
        this.o.emit({ lane: this.spec.name, kind: 'error', message });
      }
      if (this.stopped) return;
      if (step.kind === 'turn') continue;
      this.setState({
        status: step.status,
        why: step.why,
        until: step.until?.toISOString(),
        needsPerson: step.needsPerson,
      });
      this.o.emit({
        lane: this.spec.name,
        kind: step.status,
        message: `${step.why}${step.until ? ` (until ${step.until.toISOString()})` : ''}`,
      });
      await this.watch.wait(step.until);
    }
  }

  /** Asks for a contract and, when it says run, runs the turn; otherwise says how to sleep. */
  private async next(): Promise<LaneStep> {
    const { store } = this.o;
    // Before anything is read: a change from here on wakes the sleep that may follow, and none
    // before it does (were it taken later, a refusal below would leave every wait ending at once).
    this.watch.look();
    const now = this.now();
    const before = beforeAsking(readLaneState(store, this.spec.name, now), now);
    if (before) return before;
    const runtime = signedRuntime(store.policy(), this.spec.runtime);
    const worktree = runtime.worktree ? ensureWorktree(store.workspace, this.spec.name) : undefined;
    if (worktree) this.setState({ worktree: { path: worktree.path, branch: worktree.branch } });
    const cwd = worktree?.path ?? store.workspace;
    const actor: Actor = { kind: 'agent', id: this.agent, channel: 'cli' };
    const lane = {
      name: this.spec.name,
      leaseSeconds: this.o.leaseSeconds,
      cwd: worktree?.path,
      todosPerTurn: this.spec.todosPerTurn ?? 1,
    };
    const { out, contract } = openTurn(store, { goalId: this.spec.goalId, agent: this.agent, lane }, actor);
    const step = afterAsking(out, this.now());
    if (step.kind === 'sleep') return byNextSlot(step, store.load(this.spec.goalId).state, this.now());
    if (!contract) return step;
    await this.turn(contract, out, runtime, cwd, worktree?.path);
    return step;
  }

  private async turn(
    contract: Contract,
    answer: TurnFacts['answer'],
    runtime: ReturnType<typeof signedRuntime>,
    cwd: string,
    worktree: string | undefined,
  ): Promise<void> {
    const { store } = this.o;
    const name = this.spec.name;
    const contractFile = path.join(laneFiles(store).states, `${name}.contract.json`);
    writeJsonAtomic(contractFile, answer);
    const goal = store.load(this.spec.goalId).state;
    const facts: TurnFacts = {
      lane: name,
      agent: this.agent,
      workspace: store.workspace,
      cwd,
      goal,
      contract,
      answer,
      contractFile,
    };
    const env = runtimeEnv(runtime, facts, this.o.env);
    if (this.o.binDir) env.PATH = `${this.o.binDir}${path.delimiter}${env.PATH ?? ''}`;
    const minutes = turnMinutes(runtime);
    const started = this.now();
    let ending: TurnEnding;
    try {
      this.proc = startTurnProcess({
        argv: runtimeArgv(runtime, facts),
        env,
        cwd,
        logFile: laneLogFile(store, name),
        timeoutMs: minutes * 60_000,
      });
    } catch (e) {
      this.proc = undefined;
      ending = { kind: 'failed_to_start', message: (e as Error).message };
      this.finish(contract, ending, started, worktree);
      return;
    }
    const proc = this.proc;
    this.setState({
      status: 'working',
      why: `turn of run ${contract.runId}`,
      until: undefined,
      needsPerson: false,
      turn: {
        runId: contract.runId,
        contractId: contract.id,
        pid: proc.pid,
        pidStart: proc.pidStart,
        startedAt: started.toISOString(),
        deadline: new Date(started.getTime() + minutes * 60_000).toISOString(),
        cwd,
      },
    });
    this.o.emit({ lane: name, kind: 'turn_started', message: `run ${contract.runId} (pid ${proc.pid})` });
    const renew = setInterval(
      () => {
        try {
          renewLeases(store, this.spec.goalId, this.agent, this.o.leaseSeconds);
        } catch (e) {
          this.o.emit({ lane: name, kind: 'error', message: `renewing leases: ${(e as Error).message}` });
        }
      },
      Math.max(1000, (this.o.leaseSeconds * 1000) / 3),
    );
    const exit = await proc.exit;
    clearInterval(renew);
    this.proc = undefined;
    ending = exit.startError
      ? { kind: 'failed_to_start', message: exit.startError }
      : exit.timedOut
        ? { kind: 'timed_out', minutes }
        : this.stopped
          ? { kind: 'interrupted', why: 'loopx drive was stopped mid-turn' }
          : { kind: 'exited', exitCode: exit.exitCode };
    this.finish(contract, ending, started, worktree, exit.exitCode);
  }

  private finish(
    contract: Contract,
    ending: TurnEnding,
    started: Date,
    worktree: string | undefined,
    exitCode?: number,
  ): void {
    const { store } = this.o;
    const name = this.spec.name;
    const settled = settleTurn(store, this.spec.goalId, this.agent, contract.runId, ending);
    let extra = '';
    if (worktree && ending.kind !== 'failed_to_start') {
      const kept = keepWorktreeWork(store, this.spec.goalId, name, worktree, contract.runId);
      if (kept.commit) extra += `; committed ${kept.commit.slice(0, 12)} to its branch`;
      if (kept.todo) extra += `; todo ${kept.todo} brings the branch back once a person approves`;
    }
    const failed =
      ending.kind === 'interrupted'
        ? false
        : turnFailed(
            ending.kind === 'exited'
              ? { kind: 'exited', exitCode: ending.exitCode, outcome: settled.outcome }
              : { kind: 'timed_out' },
          );
    const prior = readLaneState(store, name, this.now());
    this.setState({
      turn: undefined,
      // Stopped with its driver: no longer working (the loop ends without another step).
      ...(ending.kind === 'interrupted' ? { status: 'idle' as const, why: ending.why } : {}),
      failures: failed ? prior.failures + 1 : 0,
      last: {
        runId: contract.runId,
        outcome: settled.outcome,
        ...(exitCode !== undefined ? { exitCode } : {}),
        endedAt: this.now().toISOString(),
        summary: `${settled.summary}${extra}`.slice(0, 2000),
      },
    });
    const secs = Math.round((this.now().getTime() - started.getTime()) / 1000);
    this.o.emit({
      lane: name,
      kind: 'turn_ended',
      message: `run ${contract.runId} ${settled.outcome} after ${secs} s: ${settled.summary}${extra}`,
    });
  }
}

/** The `loopx` the lanes run: this driver's own CLI, whatever else is on PATH. */
export function writeLoopxShim(dir: string, node: string, cli: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const script = `#!/bin/sh\nexec ${shellQuote(node)} ${shellQuote(cli)} "$@"\n`;
  fs.writeFileSync(path.join(dir, 'loopx'), script, { mode: 0o755 });
  return dir;
}
