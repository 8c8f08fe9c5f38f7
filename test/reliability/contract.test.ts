/**
 * The contract as a security boundary: `loopx exec` and `loopx contract verify` refuse (exit 4, or
 * 3 for a contract that does not exist) every contract that is forged (a random id, a random
 * signature, a changed command), replayed (after `summary_all` ended its run, or re-attached to a
 * new run), expired, from another goal or another workspace, and every command that differs from a
 * listed one by whitespace, quoting, `;`, `&&`, `||`, `|`, `$(...)`, backticks, a newline, a
 * comment, a redirection, case, a path, or a Unicode look-alike. Nothing runs: the listed command
 * and every variant would create a marker file if a shell ran them, and a refused `exec` leaves
 * the log as it was. Positive controls at the end prove the markers and the contract work.
 *
 * The whole variant matrix runs through the CLI in-process (`run`, the same code), a sample of it
 * and every contract attack through the BUILT command.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Store } from '../../src/core/store/store';
import { invoke } from '../../src/core/capabilities/registry';
import { shouldRun } from '../../src/core/contract/issue';
import type { Contract } from '../../src/core/model/goal-state';
import { rewriteLog } from '../helpers/contract-kit';
import {
  figure,
  hasStackTrace,
  loopx,
  loopxInProcess,
  pool,
  removeTempDirs,
  requireBuilt,
  sha256,
  sleep,
  tempDir,
} from '../helpers/reliability';
import type { Result } from '../helpers/reliability';
import { human, agent } from '../helpers/store';

let dir = '';
let ws = '';
let store: Store;
let M = '';
let M2 = '';
let LISTED = '';
let c1 = '';
const tally = { refused: 0, notFound: 0, spawned: 0, inProcess: 0 };

after(removeTempDirs);

before(() => {
  requireBuilt();
  dir = tempDir('loopx-contract-');
  ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  M = path.join(dir, 'ran-1');
  M2 = path.join(dir, 'ran-2');
  LISTED = `touch ${M}`;
  store = Store.init(ws);
  for (const g of ['ga', 'gb']) {
    invoke(store, 'goal.create', { goalId: g, title: `Goal ${g}` }, human);
    invoke(
      store,
      'todo.add',
      { goalId: g, todoId: `mk-${g}`, title: 'make the marker', action: LISTED },
      human,
    );
  }
  invoke(store, 'goal.create', { goalId: 'aa-victim', title: 'Sorted first' }, human);
  invoke(
    store,
    'todo.add',
    { goalId: 'aa-victim', todoId: 'mk-ga', title: 'same todo id as in ga', action: LISTED },
    human,
  );
  c1 = shouldRun(store, { goalId: 'ga', agent: 'codex' }, agent).interaction_contract.id!;
  assert.ok(c1, 'a contract was issued');
});

function assertNothingRan(where: string) {
  assert.ok(!fs.existsSync(M), `${where}: the marker ${M} exists: a refused command ran`);
  assert.ok(!fs.existsSync(M2), `${where}: the marker ${M2} exists: a refused command ran`);
}

const logHash = (g: string) => sha256(fs.readFileSync(store.logPath(g)));

/** A refusal: exit 4 (or 3 when `notFound` is allowed), one clear line, no stack trace, nothing ran. */
function assertRefused(r: Result, what: string, codes = [4]) {
  assert.ok(
    codes.includes(r.code),
    `${what}: exit ${r.code}, expected ${codes.join(' or ')}\nstderr: ${r.stderr.slice(0, 800)}\nstdout: ${r.stdout.slice(0, 300)}`,
  );
  assert.ok(!hasStackTrace(r.stderr), `${what}: a stack trace: ${r.stderr.slice(0, 1000)}`);
  assert.match(r.stderr, /^loopx: /);
  if (r.code === 4) tally.refused++;
  else tally.notFound++;
  assertNothingRan(what);
}

/** Runs exec and both kinds of verify with `words` after `--`, through `runner`; all must refuse. */
async function refusedEverywhere(
  contract: string,
  todo: string,
  words: string[],
  what: string,
  opts: { spawn: boolean; codes?: number[]; goal?: string },
) {
  const goal = opts.goal ?? 'ga';
  const before = logHash(goal);
  const calls = [
    ['exec', '--contract', contract, '--todo', todo, '--', ...words],
    ['contract', 'verify', '--contract', contract, '--todo', todo, '--', ...words],
    ['contract', 'verify', '--contract', contract, '--', ...words],
  ];
  const results = opts.spawn
    ? await pool(calls.slice(0, 2), 2, (args) =>
        loopx(['--workspace', ws, ...args], { cwd: ws, timeoutMs: 60_000 }),
      )
    : await Promise.all(calls.map((args) => loopxInProcess(['--workspace', ws, ...args], { cwd: ws })));
  if (opts.spawn) tally.spawned += results.length;
  else tally.inProcess += results.length;
  results.forEach((r, i) =>
    assertRefused(
      r,
      `${what}: loopx ${calls[i]!.slice(0, 2).join(' ')}${opts.spawn ? ' (spawned)' : ''}`,
      opts.codes,
    ),
  );
  assert.equal(logHash(goal), before, `${what}: a refused exec changed goal ${goal}'s log`);
}

/** Commands that differ from `touch <M>` in one way each; run by a shell, each would create M or M2 (or fail). */
function variants(): [string, string[]][] {
  const m = M;
  return [
    ['two spaces', [`touch  ${m}`]],
    ['a leading space', [` touch ${m}`]],
    ['a trailing space', [`touch ${m} `]],
    ['a tab', [`touch\t${m}`]],
    ['split into two words (joined by one space: the same bytes, as a control below)', []],
    ['single quotes', [`touch '${m}'`]],
    ['double quotes', [`touch "${m}"`]],
    ['a backslash', [`touch \\${m}`]],
    ['a trailing ;', [`touch ${m};`]],
    ['; and a second command', [`touch ${m}; touch ${M2}`]],
    ['&& and a second command', [`touch ${m} && touch ${M2}`]],
    ['|| and a second command', [`touch ${m} || touch ${M2}`]],
    ['a pipe', [`touch ${m} | cat`]],
    ['background &', [`touch ${m} &`]],
    ['a redirection', [`touch ${m} > ${M2}`]],
    ['$(...)', [`touch $(echo ${m})`]],
    ['backticks', [`touch \`echo ${m}\``]],
    ['${...} expansion', [`touch \${HOME:+${m}}`]],
    ['a trailing newline', [`touch ${m}\n`]],
    ['a newline and a second command', [`touch ${m}\ntouch ${M2}`]],
    ['a carriage return', [`touch ${m}\r`]],
    ['a comment', [`touch ${m} # ok`]],
    ['upper case', [`TOUCH ${m}`]],
    ['a full path to the program', [`/usr/bin/touch ${m}`]],
    ['env in front', [`env touch ${m}`]],
    ['a Cyrillic о', [`t\u043euch ${m}`]],
    ['a no-break space', [`touch\u00a0${m}`]],
    ['an ideographic space', [`touch\u3000${m}`]],
    ['a zero-width space', [`touch\u200b ${m}`]],
    ['a fullwidth letter', [`\uff54ouch ${m}`]],
    ['a combining mark', [`tou\u0301ch ${m}`]],
    ['NFD of an accent-free string plus a BOM', [`\ufefftouch ${m}`]],
    ['a right-to-left override', [`touch \u202e${m}`]],
    ['a prefix only', [`touch`]],
    ['empty', ['']],
  ].filter(([, w]) => (w as string[]).length > 0) as [string, string[]][];
}

describe(
  'contract: forged, replayed, expired, cross-goal contracts and look-alike commands are refused; nothing runs',
  { concurrency: 1 },
  () => {
    it(
      `in-process CLI: ${variants().length} command variants x exec, verify --todo, verify (no todo)`,
      { timeout: 60_000 },
      async (t) => {
        for (const [what, words] of variants())
          await refusedEverywhere(c1, 'mk-ga', words, what, { spawn: false });
        // Control: the listed command passed as two words is the same bytes once joined, and is valid.
        const control = await loopxInProcess(
          ['--workspace', ws, 'contract', 'verify', '--contract', c1, '--todo', 'mk-ga', '--', 'touch', M],
          { cwd: ws },
        );
        assert.equal(control.code, 0, `the listed command verifies: ${control.stderr}`);
        assertNothingRan('after the variant matrix');
        figure(
          t,
          `contract/variants in-process: ${variants().length} variants x 3 commands refused (exit 4), nothing ran, logs unchanged`,
        );
      },
    );

    it(
      'the built command: a sample of the variants through exec and contract verify',
      { timeout: 120_000 },
      async () => {
        const sample = variants().filter(([what]) =>
          /two spaces|single quotes|; and|&&|\$\(|backticks|trailing newline|Cyrillic|no-break|a comment/.test(
            what,
          ),
        );
        assert.ok(sample.length >= 10);
        for (const [what, words] of sample)
          await refusedEverywhere(c1, 'mk-ga', words, what, { spawn: true });
        const ok = await loopx(
          [
            '--workspace',
            ws,
            '--format',
            'json',
            'contract',
            'verify',
            '--contract',
            c1,
            '--todo',
            'mk-ga',
            '--',
            LISTED,
          ],
          { cwd: ws },
        );
        assert.equal(ok.code, 0, `positive control: the exact listed command verifies: ${ok.stderr}`);
        assert.equal((JSON.parse(ok.stdout) as { valid: boolean }).valid, true);
        assertNothingRan('after the spawned variants');
      },
    );

    it(
      'forged: a random contract id (3), a random signature (4), a changed command under the old signature (4)',
      { timeout: 120_000 },
      async () => {
        for (let i = 0; i < 3; i++) {
          const forged = `c-${randomBytes(5).toString('hex')}`;
          await refusedEverywhere(forged, 'mk-ga', [LISTED], `random contract id ${forged}`, {
            spawn: i === 0,
            codes: [3],
          });
        }
        const original = fs.readFileSync(store.logPath('ga'));
        const originalSnap = fs.readFileSync(store.snapshotPath('ga'));
        const restore = () => {
          fs.writeFileSync(store.logPath('ga'), original);
          fs.writeFileSync(store.snapshotPath('ga'), originalSnap);
        };
        const editContract = (edit: (c: Contract) => void) =>
          rewriteLog(store, 'ga', (events) => {
            for (const e of events)
              if (e.type === 'run.started' && e.data.run.contract?.id === c1) edit(e.data.run.contract);
          });
        try {
          // The chain is recomputed, so only the contract's HMAC can catch these.
          editContract((c) => (c.sig = randomBytes(32).toString('hex')));
          await refusedEverywhere(c1, 'mk-ga', [LISTED], 'a random signature', { spawn: true });
          restore();
          editContract((c) => (c.actions[0]!.command = `touch ${M2}`));
          await refusedEverywhere(c1, 'mk-ga', [`touch ${M2}`], 'a command changed under the old signature', {
            spawn: true,
          });
          restore();
          editContract((c) => (c.expiresAt = '2099-01-01T00:00:00.000Z'));
          await refusedEverywhere(c1, 'mk-ga', [LISTED], 'an expiry pushed out under the old signature', {
            spawn: false,
          });
          restore();
          editContract((c) => (c.sig = c.sig.slice(0, -1) + (c.sig.endsWith('0') ? '1' : '0')));
          await refusedEverywhere(c1, 'mk-ga', [LISTED], 'one hex digit of the signature changed', {
            spawn: false,
          });
        } finally {
          restore();
        }
        const ok = await loopxInProcess(['--workspace', ws, 'contract', 'verify', '--contract', c1], {
          cwd: ws,
        });
        assert.equal(ok.code, 0, `restored: the contract verifies again: ${ok.stderr}`);
      },
    );

    it(
      'cross-goal and cross-workspace: a todo of another goal, a contract copied into another goal, another workspace',
      { timeout: 120_000 },
      async () => {
        // ga's contract, asked for gb's todo (same command).
        await refusedEverywhere(c1, 'mk-gb', [LISTED], "another goal's todo", { spawn: true, goal: 'gb' });
        const done = await loopx(
          [
            '--workspace',
            ws,
            'todo',
            'done',
            '--goal-id',
            'gb',
            '--todo-id',
            'mk-gb',
            '--contract',
            c1,
            '--summary',
            'x',
          ],
          { cwd: ws },
        );
        assertRefused(done, "todo done on gb under ga's contract");
        assert.equal(store.load('gb').state.todos[0]!.status, 'open');
        // The signed contract copied into another goal's log as a run of its own (the chain kept valid),
        // in a goal that sorts first and has a todo of the same id: the copy is found, and refused.
        const contract = store.load('ga').state.runs.find((r) => r.contract?.id === c1)!.contract!;
        invoke(
          store,
          'run.start',
          { goalId: 'aa-victim', runId: contract.runId, agent: 'codex', contract },
          agent,
        );
        fs.rmSync(path.join(store.localDir, 'contracts', `${c1}.goal`), { force: true });
        fs.mkdirSync(path.join(store.localDir, 'contracts'), { recursive: true });
        fs.writeFileSync(path.join(store.localDir, 'contracts', `${c1}.goal`), 'aa-victim');
        await refusedEverywhere(c1, 'mk-ga', [LISTED], 'a contract copied into another goal', {
          spawn: true,
          goal: 'aa-victim',
        });
        fs.writeFileSync(path.join(store.localDir, 'contracts', `${c1}.goal`), 'ga');
        // Another workspace: the same goals (a clone without local/), so another key.
        const other = path.join(dir, 'clone');
        fs.mkdirSync(other);
        fs.cpSync(path.join(ws, '.loopx'), path.join(other, '.loopx'), {
          recursive: true,
          filter: (src) => !src.includes(`${path.sep}local`),
        });
        const r = await loopx(
          ['--workspace', other, 'exec', '--contract', c1, '--todo', 'mk-ga', '--', LISTED],
          { cwd: other },
        );
        assertRefused(r, 'a contract used in another workspace', [3, 4]);
        const v = await loopx(['--workspace', other, 'contract', 'verify', '--contract', c1], { cwd: other });
        assertRefused(v, 'a contract verified in another workspace', [3, 4]);
      },
    );

    it('expired: a contract past its expiry is refused by exec and verify', { timeout: 60_000 }, async () => {
      const short = shouldRun(
        store,
        { goalId: 'gb', agent: 'short-lived', ttlMinutes: 0.002 },
        { kind: 'agent', id: 'short-lived', channel: 'cli' },
      ).interaction_contract;
      assert.ok(short.id, 'a short-lived contract');
      await sleep(Math.max(0, Date.parse(short.expires_at!) - Date.now()) + 50);
      await refusedEverywhere(short.id, 'mk-gb', [LISTED], 'an expired contract', {
        spawn: true,
        goal: 'gb',
      });
      const v = await loopxInProcess(['--workspace', ws, 'contract', 'verify', '--contract', short.id], {
        cwd: ws,
      });
      assertRefused(v, 'verify of an expired contract');
      assert.match(v.stderr, /expired/);
    });

    it(
      'replayed: after summary_all ended its run, and re-attached to a new run; then the positive control runs the marker',
      { timeout: 120_000 },
      async () => {
        // summary_all ends the caller's own run: codex's (LOOPX_AGENT), who holds c1.
        const end = await loopx(['--workspace', ws, '--format', 'json', 'summary_all', '--goal-id', 'ga'], {
          cwd: ws,
          env: { LOOPX_AGENT: 'codex' },
        });
        assert.equal(end.code, 0, end.stderr);
        assert.ok(
          (JSON.parse(end.stdout) as { ended_runs: unknown[] }).ended_runs.length >= 1,
          `summary_all ended the run: ${end.stdout.slice(0, 1500)} runs ${JSON.stringify(store.load('ga').state.runs)}`,
        );
        await refusedEverywhere(c1, 'mk-ga', [LISTED], 'a contract whose run ended (summary_all)', {
          spawn: true,
        });
        // The signed contract attached to a new run of the same goal: the ended run still owns it.
        const contract = store.load('ga').state.runs.find((r) => r.contract?.id === c1)!.contract!;
        invoke(store, 'run.start', { goalId: 'ga', runId: 'run-replay', agent: 'codex', contract }, agent);
        await refusedEverywhere(c1, 'mk-ga', [LISTED], 'a contract re-attached to a new run', {
          spawn: false,
        });
        assertNothingRan('after every attack');
        // (That run now holds c1 and would be reused by should-run for codex: end it first.)
        invoke(store, 'run.end', { goalId: 'ga', runId: 'run-replay', outcome: 'abandoned' }, agent);

        // Positive control: a fresh contract, the exact command, through the built command: it runs.
        const fresh = shouldRun(store, { goalId: 'ga', agent: 'codex' }, agent).interaction_contract;
        assert.ok(fresh.id && fresh.id !== c1);
        const run = await loopx(
          ['--workspace', ws, 'exec', '--contract', fresh.id, '--todo', 'mk-ga', '--', LISTED],
          { cwd: ws },
        );
        assert.equal(run.code, 0, `the exact command under a valid contract runs: ${run.stderr}`);
        assert.ok(fs.existsSync(M), 'the marker exists: the markers do prove that a command ran');
        assert.equal(store.load('ga').state.todos.find((x) => x.id === 'mk-ga')!.status, 'done');
        // And once done, the same contract refuses to run it again.
        fs.rmSync(M);
        await refusedEverywhere(fresh.id, 'mk-ga', [LISTED], 'a contract whose todo is done', {
          spawn: false,
        });
      },
    );

    it('figures', (t) => {
      figure(
        t,
        `contract: ${tally.refused} refusals (exit 4) and ${tally.notFound} not-found (exit 3), ${tally.spawned} through the built command and ${tally.inProcess} in-process; nothing ran; positive controls verified and ran`,
      );
      assert.ok(tally.refused + tally.notFound > 100);
    });
  },
);
