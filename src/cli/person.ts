/**
 * A person at the CLI is whoever can unlock a LoopX key: the passphrase comes from the terminal
 * (`/dev/tty`, echo off) or from a file descriptor the person's own script opened
 * (`--passphrase-fd N`). A terminal that merely looks interactive proves nothing: an agent can
 * fake one, but it does not know the passphrase.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import type { Actor, Signer } from '../core/index';
import { refused, terminalKeys, unlockTerminalKey, usageError } from '../core/index';
import type { CliContext } from './context';

/** Reads one line from the controlling terminal with echo off; undefined when there is none. */
export function readFromTerminal(prompt: string, echo = false): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync('/dev/tty', 'r+');
  } catch {
    return undefined;
  }
  const stty = (arg: string) => spawnSync('stty', [arg], { stdio: [fd, 'ignore', 'ignore'] });
  try {
    fs.writeSync(fd, prompt);
    if (!echo) stty('-echo');
    const bytes: number[] = [];
    const one = Buffer.alloc(1);
    for (;;) {
      const n = fs.readSync(fd, one, 0, 1, null);
      if (n === 0 || one[0] === 0x0a || one[0] === 0x0d) break;
      bytes.push(one[0]!);
      if (bytes.length > 4096) break;
    }
    return Buffer.from(bytes).toString('utf8');
  } finally {
    if (!echo) stty('echo');
    try {
      // With echo off the person's Enter was not shown.
      if (!echo) fs.writeSync(fd, '\n');
    } catch {
      /* the terminal went away */
    }
    fs.closeSync(fd);
  }
}

/** Asks a question on the controlling terminal, the answer echoed; undefined when there is none. */
export const askTerminalLine = (prompt: string): string | undefined => readFromTerminal(prompt, true);

/** The first line of file descriptor `fd` (a pipe or file the person's script opened). */
function readFromFd(fd: number): string {
  let text: string;
  try {
    text = fs.readFileSync(fd, 'utf8');
  } catch (e) {
    throw usageError(`--passphrase-fd ${fd}: cannot read it (${(e as Error).message})`, {
      reason: 'bad_passphrase_fd',
    });
  }
  return text.split(/\r?\n/, 1)[0] ?? '';
}

/**
 * The passphrase, from --passphrase-fd or asked on the terminal. `what` names the act ("approve a
 * gate") and `elsewhere` the other way a person can do it, for the refusal when neither works.
 */
export function passphrase(
  ctx: CliContext,
  prompt: string,
  what: string,
  elsewhere?: string,
  preface?: string,
): string {
  const fd = ctx.globals.passphraseFd;
  if (fd !== undefined) {
    if (preface) ctx.io.stderr(preface);
    return readFromFd(fd);
  }
  if (preface) prompt = preface + prompt;
  const typed = (ctx.io.askTerminal ?? readFromTerminal)(prompt);
  if (typed === undefined) {
    const cmd = ctx.globals.commandLine ?? 'the command';
    throw refused(
      `to ${what}, a person signs it with their key's passphrase, and there is no terminal here to ask it on: ` +
        `run \`${cmd}\` at a terminal, or from your own script with --passphrase-fd N` +
        `${elsewhere ? `, or use "${elsewhere}" in VS Code` : ''}. Agents and scripts cannot ${what}.`,
      { reason: 'no_terminal' },
    );
  }
  return typed;
}

/**
 * The person making a decision: their key, unlocked with its passphrase, and the actor named
 * after it. `what` says what they are doing ("approve a gate"); `vscodeCommand` the editor's way;
 * `preface` what they must read before they sign (shown with the prompt, or on stderr with
 * --passphrase-fd), never shown when nobody can be asked.
 */
export function person(
  ctx: CliContext,
  what: string,
  vscodeCommand: string,
  preface?: string,
): { actor: Actor; signer: Signer } {
  const dir = ctx.configDir();
  if (terminalKeys(dir).length === 0) {
    throw refused(
      `to ${what} you sign it with your LoopX key, and this machine has none: run \`loopx key create\` once at a terminal ` +
        `(it asks for a new passphrase), then \`${ctx.globals.commandLine ?? 'the command'}\` again there ` +
        `(or from your own script with --passphrase-fd N), or use "${vscodeCommand}" in VS Code. Agents and scripts cannot ${what}.`,
      { reason: 'no_key' },
    );
  }
  const signer = unlockTerminalKey(
    dir,
    passphrase(ctx, `LoopX passphrase to ${what}: `, what, vscodeCommand, preface),
  );
  return { actor: { kind: 'user', id: signer.name, channel: 'cli' }, signer };
}
