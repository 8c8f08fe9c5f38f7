/**
 * Writing a goal's log by hand, as a person with an editor or an agent with a shell would: the
 * clone's own log file, and lines chained the way LoopX chains its own (next seq, sha256 of the
 * line before, a clock stamp after the one before, the log's writer and version).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sha256 } from '../../src/core/store/json-file';
import { nextHlc } from '../../src/core/model/hlc';
import type { LoopxEvent } from '../../src/core/model/events';

/** The log this clone of `workspace` writes for `goalId` (its writer id is in local/writer-id). */
export function writerLog(workspace: string, goalId: string): string {
  const writer = fs.readFileSync(path.join(workspace, '.loopx', 'local', 'writer-id'), 'utf8').trim();
  return path.join(workspace, '.loopx', 'goals', goalId, 'events', `${writer}.jsonl`);
}

/** The line that would follow the last line of `file`, chained; `ev` may override any field. */
export function chainedLine(
  file: string,
  ev: { type: string; data: unknown } & Record<string, unknown>,
): string {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const lastLine = lines.at(-1)!;
  const last = JSON.parse(lastLine) as LoopxEvent;
  return JSON.stringify({
    v: last.v,
    // One tick above the line before, whatever the clock: a store on a test's clock in the past
    // would hold a line stamped by the real one as stamped ahead.
    ...(last.v === 2 ? { hlc: nextHlc(last.hlc, new Date(0)) } : {}),
    seq: last.seq + 1,
    id: `ev-hand${randomBytes(5).toString('hex')}`,
    ts: new Date().toISOString(),
    writer: last.writer,
    actor: { kind: 'agent', id: 'agent', channel: 'cli' },
    prev: sha256(lastLine),
    ...ev,
  });
}

/** Appends a chained line to `file` and returns the event it holds. */
export function appendChained(
  file: string,
  ev: { type: string; data: unknown } & Record<string, unknown>,
): LoopxEvent {
  const line = chainedLine(file, ev);
  fs.appendFileSync(file, line + '\n');
  return JSON.parse(line) as LoopxEvent;
}

/**
 * Puts `events` into `workspace`'s goal as the log of a writer of their own (`writer`), chained
 * from seq 1: what a teammate's push, or a file put into `.loopx/` by hand, brings. Returns the file.
 */
export function plantWriterLog(
  workspace: string,
  goalId: string,
  writer: string,
  events: Record<string, unknown>[],
): string {
  const file = path.join(workspace, '.loopx', 'goals', goalId, 'events', `${writer}.jsonl`);
  let prev: string | null = null;
  const lines = events.map((ev, i) => {
    const line = JSON.stringify({ ...ev, writer, seq: i + 1, prev });
    prev = sha256(line);
    return line;
  });
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** A version 2 event of an agent's, stamped `hlc`, for plantWriterLog to give a writer and a place. */
export function agentEvent(type: string, hlc: string, data: unknown): Record<string, unknown> {
  return {
    v: 2,
    hlc,
    id: `ev-${randomBytes(5).toString('hex')}`,
    ts: new Date().toISOString(),
    actor: { kind: 'agent', id: 'agent', channel: 'cli' },
    type,
    data,
  };
}
