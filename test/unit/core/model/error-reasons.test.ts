/**
 * Code reacts to an error by its reason code (`e.reason`), never by its message text: messages are
 * written for people and change. This scans src/ for the ways a branch on the text looks, so one
 * that slips back in fails here. Showing a message (logging it, quoting it, trimming it) is fine.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError, refused, notFound, conflict } from '../../../../src/core/model/errors';

const SRC = path.join(__dirname, '..', '..', '..', '..', 'src');

/** A regex tested against a message (`/x/.test(e.message)`), or a message searched for a word. */
const BRANCH_ON_MESSAGE = [
  /\.test\((?:[^()]|\([^()]*\))*\.message\s*\)/,
  /\.message\s*\.\s*(?:includes|match|matchAll|search|startsWith|endsWith|indexOf)\s*\(/,
];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

function offences(text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => [line, i + 1] as const)
    .filter(([line]) => BRANCH_ON_MESSAGE.some((re) => re.test(line)))
    .map(([line, n]) => `${n}: ${line.trim()}`);
}

describe('error reasons', () => {
  it('no source branches on the text of an error message', () => {
    const files = sources(SRC);
    assert.ok(files.length > 50, `expected the sources under ${SRC}`);
    const found = files.flatMap((f) =>
      offences(fs.readFileSync(f, 'utf8')).map((o) => `${path.relative(SRC, f)}:${o}`),
    );
    assert.deepEqual(found, [], 'branch on e.reason (a LoopxError reason code) instead of the message');
  });

  it('the scan catches the usual shapes and lets a displayed message through', () => {
    for (const bad of [
      'if (!(e instanceof Error && /already ended/.test(e.message))) throw e;',
      'if (/expired/.test((e as Error).message)) retry();',
      "if (err.message.includes('lock')) wait();",
      'const m = e.message.match(/contract (\\S+)/);',
      "if (error.message.startsWith('gate')) return;",
    ])
      assert.notDeepEqual(offences(bad), [], bad);
    for (const ok of [
      'io.stderr(`loopx: ${e.message}\\n`);',
      "const msg = e instanceof LoopxError ? e.message : 'unexpected';",
      'return refuse(`cannot read the hook input (${(e as Error).message.slice(0, 200)})`);',
      "message.replace(/^error: /, '')",
      "if (e instanceof LoopxError && e.reason === 'run_ended') return;",
    ])
      assert.deepEqual(offences(ok), [], ok);
  });

  it('reason: details.reason when given, else the kind', () => {
    assert.equal(refused('no', { reason: 'todo_finished' }).reason, 'todo_finished');
    assert.equal(conflict('busy', { reason: 'lock_busy' }).reason, 'lock_busy');
    assert.equal(notFound('gone').reason, 'not_found');
    assert.equal(new LoopxError('corrupt', 'bad', { reason: 42 }).reason, 'corrupt');
    // Copied with its details (the agent tools add a next step to the message), it keeps its code.
    const e = refused('x', { reason: 'contract_expired' });
    assert.equal(new LoopxError(e.kind, `${e.message}. Next: …`, e.details).reason, 'contract_expired');
  });
});
