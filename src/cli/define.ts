/** What the command files share to define their commands: the action wrapper, option parsers, help examples. */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { quote } from '../core/index';
import type { CliContext } from './context';

export { VERSION } from '../core/model';

/** The CLI running now (bin/loopx.js through a PATH link, or dist/cli.js), by its real path. */
export function runningCli(): string {
  const entry = process.argv[1] ?? '';
  return entry && fs.existsSync(entry) ? fs.realpathSync(entry) : path.resolve(entry);
}

/** The action wrapper `run` (main.ts) hands to every command file. */
export type Act = <A extends unknown[]>(
  fn: (ctx: CliContext, ...args: A) => unknown,
) => (...args: unknown[]) => Promise<void>;

export const num = (what: string) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError(`${what} must be a number, not ${quote(v)}`);
  return n;
};
export const list = (v: string, prev: string[] = []) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];
export const count = (what: string) => (v: string) => {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError(`${what} must be a whole number from 1 up, not ${quote(v)}`);
  return n;
};

/** A file descriptor number: 0 (standard input) and up. */
export const fdNumber = (what: string) => (v: string) => {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError(`${what} must be a file descriptor number (0 and up), not ${quote(v)}`);
  return n;
};

export function example(cmd: Command, ...lines: string[]) {
  return cmd.addHelpText(
    'after',
    `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`,
  );
}
