/** What every command needs: the workspace, who is calling, how to print, how to fail. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Actor, StoreOptions } from '../core/index';
import {
  agentFromEnv,
  configDir,
  DEFAULT_AGENT,
  LoopxError,
  notFound,
  sameAgent,
  Store,
  usageError,
} from '../core/index';

export interface GlobalOptions {
  format?: string;
  json?: boolean;
  workspace?: string;
  passphraseFd?: number;
  idempotencyKey?: string;
  /** The command being run, `loopx reward add` (set by main.ts, for messages that name it). */
  commandLine?: string;
}

export interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Whether the reader of stdout went away (a closed pipe); undefined: not known. */
  stdoutClosed?: () => boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Asks on the terminal with echo off (a passphrase); undefined when there is no terminal. */
  askTerminal?: (prompt: string) => string | undefined;
  /** Asks a question on the terminal, the answer echoed (a yes or no); undefined when there is none. */
  ask?: (prompt: string) => string | undefined;
  /** Reads all of standard input (hook events arrive there). */
  readStdin?: () => Promise<string>;
}

/** Documented exit codes (README, "Exit codes"). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  notFound: 3,
  refused: 4,
  conflict: 5,
  corrupt: 6,
  storage: 7,
} as const;

export function exitCodeFor(e: unknown): number {
  if (!(e instanceof LoopxError)) return EXIT.error;
  switch (e.kind) {
    case 'usage':
      return EXIT.usage;
    case 'not_found':
      return EXIT.notFound;
    case 'refused':
      return EXIT.refused;
    case 'conflict':
      return EXIT.conflict;
    case 'corrupt':
      return EXIT.corrupt;
    case 'storage':
      return EXIT.storage;
    default:
      return EXIT.error;
  }
}

export class CliContext {
  private opened: Store | undefined;

  constructor(
    readonly io: Io,
    readonly globals: GlobalOptions,
  ) {}

  get json(): boolean {
    if (this.globals.json) return true;
    const f = this.globals.format ?? this.io.env.LOOPX_FORMAT;
    if (f === undefined || f === 'text') return false;
    if (f === 'json') return true;
    // --format is checked by the parser, so a bad value here came from the environment.
    throw usageError(
      `${this.globals.format !== undefined ? '--format' : 'LOOPX_FORMAT'} must be json or text, not ${JSON.stringify(f)}`,
    );
  }

  /** The workspace folder: --workspace, LOOPX_WORKSPACE, or the nearest parent with a `.loopx/`. */
  workspaceDir(): string | undefined {
    return this.givenWorkspaceDir() ?? Store.discover(this.io.cwd);
  }

  /** The folder named by --workspace or LOOPX_WORKSPACE, if any (`init` uses it, else the current folder, like `git init`). */
  givenWorkspaceDir(): string | undefined {
    const given = this.globals.workspace ?? this.io.env.LOOPX_WORKSPACE;
    if (!given) return undefined;
    const dir = path.resolve(this.io.cwd, given);
    if (!fs.existsSync(dir))
      throw notFound(
        `the workspace folder ${dir} does not exist (from ${this.globals.workspace ? '--workspace' : 'LOOPX_WORKSPACE'})`,
      );
    return dir;
  }

  /**
   * The workspace's store, opened once per command: the `--goal-id` check before the command and
   * the command itself share it (one discovery, one open).
   */
  store(): Store {
    if (this.opened) return this.opened;
    const dir = this.workspaceDir();
    if (!dir)
      throw notFound(
        `no LoopX workspace here or above ${this.io.cwd}: run \`loopx init\` first (or pass --workspace DIR)`,
      );
    this.opened = Store.open(dir, this.storeOptions());
    return this.opened;
  }

  /** The user's LoopX config folder, from this call's environment (keys, pinned keys, secrets). */
  configDir(): string {
    return configDir(this.io.env);
  }

  /** What every store this call opens shares: the config folder of this call's environment. */
  storeOptions(): StoreOptions {
    const callKey = this.globals.idempotencyKey ?? (this.io.env.LOOPX_IDEMPOTENCY_KEY || undefined);
    return { configDir: this.configDir(), onWarning: (m) => this.warn([m]), callKey, oneShot: true };
  }

  /** Like `store`, but creates `.loopx/` in the current folder when there is none (goal creation). */
  storeOrInit(): Store {
    const dir = this.workspaceDir();
    if (dir && fs.existsSync(path.join(dir, '.loopx', 'goals'))) return Store.open(dir, this.storeOptions());
    const target = dir ?? this.io.cwd;
    this.io.stderr(`loopx: initialised a LoopX workspace in ${target}\n`);
    return Store.init(target, this.storeOptions());
  }

  /**
   * Who calls when nobody signs: an agent (`LOOPX_AGENT`) or a script. A person is the one who
   * unlocks a key (person.ts), however interactive the terminal looks.
   */
  actor(): Actor {
    const named = agentFromEnv(this.io.env) || this.io.env.LOOPX_ACTOR;
    if (named) return { kind: 'agent', id: named.slice(0, 128), channel: 'cli' };
    return { kind: 'agent', id: safeUser().slice(0, 128), channel: 'cli', osUser: true };
  }

  /**
   * The caller's agent identity: `LOOPX_AGENT` names a shell agent (an empty one counts as unset),
   * else the agent host session the command runs in (Claude Code's, Codex's). Undefined when the
   * caller has none (a person, a script): a contract id is then the capability.
   */
  callerAgent(): string | undefined {
    return agentFromEnv(this.io.env);
  }

  /**
   * The agent named by `--agent` or `LOOPX_AGENT`, if any. With LOOPX_AGENT set, `--agent` may
   * only repeat it: an agent acts in its own name only (refused `agent_mismatch`).
   */
  givenAgent(flag?: string): string | undefined {
    return sameAgent(flag, this.callerAgent(), '--agent');
  }

  /** The agent a call acts as: `--agent`, LOOPX_AGENT, else DEFAULT_AGENT ("agent"). */
  agentName(flag?: string): string {
    return this.givenAgent(flag) ?? DEFAULT_AGENT;
  }

  print(jsonValue: unknown, text: () => string) {
    if (this.json) this.io.stdout(JSON.stringify(jsonValue, null, 2) + '\n');
    else {
      const t = text();
      if (t) this.io.stdout(t.endsWith('\n') ? t : t + '\n');
    }
  }

  warn(messages: readonly string[]) {
    for (const m of messages) this.io.stderr(`loopx: warning: ${m}\n`);
  }

  /** What the CLI took a person's words to mean, on stderr (stdout stays the command's output). */
  note(message: string) {
    this.io.stderr(`loopx: ${message}\n`);
  }
}

/** The OS user name, or `user` when there is none (a uid with no passwd entry). */
export function safeUser(): string {
  try {
    return os.userInfo().username || 'user';
  } catch {
    return 'user';
  }
}
