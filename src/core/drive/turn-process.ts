/**
 * One turn's process: started as the leader of a process group of its own (so that stopping it
 * stops everything it started: the agent's shell commands, its MCP servers), its output written
 * straight to the lane's log file (so it keeps running, and its output is kept, if the driver
 * dies), and stopped at its deadline: SIGTERM, then SIGKILL after a grace period.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';

/** How long a stopped turn gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 5000;

export interface TurnProcessSpec {
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logFile: string;
  timeoutMs: number;
}

export interface TurnExit {
  /** The exit code; 128 + the signal's number when a signal ended it; 127 when it could not start. */
  exitCode: number;
  timedOut: boolean;
  /** Set when the program could not be started at all. */
  startError?: string;
  durationMs: number;
}

export interface TurnProcess {
  pid: number;
  /** The kernel's start time of the process (Linux), to recognise it after a restart. */
  pidStart?: string;
  exit: Promise<TurnExit>;
  /** Stops the whole group now (SIGTERM, SIGKILL after the grace period). */
  stop(): void;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Field 22 of /proc/<pid>/stat, the start time in clock ticks; undefined off Linux or when gone. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process group `pid` leads still has a member. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

/** Stops the group `pid` leads: SIGTERM, then SIGKILL to whatever is left after the grace period. */
export function stopGroup(pid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  signalGroup(pid, 'SIGTERM');
  return new Promise((resolve) => {
    const started = Date.now();
    const check = () => {
      if (!groupAlive(pid)) return resolve();
      if (Date.now() - started >= graceMs) {
        signalGroup(pid, 'SIGKILL');
        return resolve();
      }
      setTimeout(check, 50);
    };
    check();
  });
}

export function startTurnProcess(spec: TurnProcessSpec): TurnProcess {
  const started = performance.now();
  const out = fs.openSync(spec.logFile, 'w', 0o600);
  let child;
  try {
    child = spawn(spec.argv[0]!, spec.argv.slice(1), {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', out, out],
      detached: true,
    });
  } finally {
    fs.closeSync(out);
  }
  const pid = child.pid;
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    if (pid) void stopGroup(pid);
  };
  const exit = new Promise<TurnExit>((resolve) => {
    const done = (r: Omit<TurnExit, 'durationMs' | 'timedOut'>) => {
      if (timer) clearTimeout(timer);
      // What the turn started in the background goes with it.
      if (pid) signalGroup(pid, 'SIGKILL');
      resolve({ ...r, timedOut, durationMs: Math.round(performance.now() - started) });
    };
    child.on('error', (e) => done({ exitCode: 127, startError: e.message }));
    child.on('exit', (code, signal) =>
      done({ exitCode: code ?? (signal ? 128 + (SIGNALS[signal] ?? 0) : 1) }),
    );
  });
  if (pid)
    timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, spec.timeoutMs);
  return { pid: pid ?? 0, pidStart: pid ? processStart(pid) : undefined, exit, stop };
}
