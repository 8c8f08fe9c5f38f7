/**
 * Recording a reward from the decision page with a passkey, end to end: the real status server on
 * a workspace the built CLI made (goal g: an agent's two runs that ended, with evidence, and one
 * still open; a gate waiting so that `/decide` lists the goal), Debian's Chromium with Chromium's
 * virtual authenticator (test/helpers/passkey-browser.ts).
 *
 * The person registers a passkey, follows the list page's Rewards link and records 0.8 with a
 * comment on an ended run; a fresh Store and the built CLI then show the reward by the passkey's
 * name, through the browser, its signature accepted. Then: the commit's POST sent again, a score
 * the capability does not take, a run still open or unknown, and a run rewarded by someone else
 * while the page showed it.
 *
 *   node --import tsx --test test/browser/passkey-reward.test.ts
 *
 * Screenshot: test-results/screenshots/decide-reward.png.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { LoopxError, prepareCall, Store, workspaceId } from '../../src/core/index';
import type { LoopxEvent } from '../../src/core/index';
import { loopx, ok, PASSPHRASE, removeTempDirs, tempDir } from '../helpers/cli';
import { writerLog } from '../helpers/log-kit';
import type { PasskeyBrowser } from '../helpers/passkey-browser';
import {
  buildForBrowser,
  openPasskeyBrowser,
  passkeyLink,
  registerPasskey,
  resendCommit,
  SHOTS,
} from '../helpers/passkey-browser';

interface RewardJson {
  score_min: number;
  score_max: number;
  runs: {
    id: string;
    agent: string;
    outcome: string;
    ended_at: string;
    summary: string;
    evidence: number;
    rewards: { score: number; comment: string; by: string; via: string }[];
  }[];
}

describe('recording a reward from a browser with a passkey', () => {
  const ws = fs.realpathSync(tempDir('loopx-reward-ws-'));
  const config = tempDir('loopx-reward-config-');
  const env = { LOOPX_CONFIG_DIR: config };
  const agent = { LOOPX_AGENT: 'codex' };
  let h: PasskeyBrowser;
  let page: Page;
  const runs: string[] = [];
  let open = '';
  const run = (args: string[], extra: Record<string, string> = {}) =>
    loopx(args, { cwd: ws, env: { ...env, ...extra } });
  const json = async (args: string[], extra: Record<string, string> = {}) =>
    JSON.parse(ok(await run(['--json', ...args], extra)).stdout);
  const logLines = () => fs.readFileSync(writerLog(ws, 'g'), 'utf8').split('\n').filter(Boolean);
  /** The goal as another process reads it now: a fresh Store, the logs replayed. */
  const fresh = () => Store.open(ws, { configDir: config }).load('g').state;
  const rewardUrl = () => `${h.origin}/reward/${workspaceId(ws)}/g`;
  const runItem = (id: string) => page.locator(`li[data-run="${id}"]`);

  /** One agent turn: a run opened by the contract, evidence on it, and (unless `keepOpen`) its end. */
  async function agentTurn(evidence: string, keepOpen = false): Promise<string> {
    const r = (await json(['quota', 'should-run', '--goal-id', 'g'], agent)) as { run_id: string };
    assert.ok(r.run_id, 'the contract opened a run');
    await json(['evidence', 'add', '--goal-id', 'g', '--run-id', r.run_id, '--summary', evidence], agent);
    if (!keepOpen) await json(['summary_all', '--goal-id', 'g'], agent);
    return r.run_id;
  }

  before(async () => {
    buildForBrowser();
    ok(await run(['init']));
    await json(['goal', 'create', '--goal-id', 'g', '--title', 'Write the notes', '--turns', '5']);
    await json(['todo', 'add', '--goal-id', 'g', '--todo-id', 'notes', '--title', 'Write the notes']);
    ok(
      await loopx(['key', 'create', '--name', 'alice', '--passphrase-fd', '3'], {
        cwd: ws,
        env,
        fd3: `${PASSPHRASE}\n`,
      }),
    );
    runs.push(await agentTurn('drafted the notes <b>bold</b>'));
    runs.push(await agentTurn('checked the links'));
    open = await agentTurn('still going', true);
    // A gate waiting, so that the list page lists the goal (and its Rewards link).
    await json([
      'todo',
      'add',
      '--goal-id',
      'g',
      '--todo-id',
      'publish',
      '--title',
      'Publish',
      '--action',
      'echo published',
      '--gate',
      'pub',
    ]);
    h = await openPasskeyBrowser(ws, config);
    page = h.page;
    await registerPasskey(page, await passkeyLink(ws, config, h.srv.port, 'ada-laptop'), 'ada-laptop');
  });

  after(async () => {
    await h?.close();
    removeTempDirs();
  });

  it('the list page links to the goal’s rewards; the page lists the ended runs, newest first', async () => {
    await page.goto(`${h.origin}/decide`);
    await page.getByRole('link', { name: 'Rewards' }).first().click();
    await page.waitForURL(rewardUrl());
    await runItem(runs[0]!).waitFor({ timeout: 15_000 });
    const doc = (await page.evaluate(async () => {
      const r = await fetch(location.pathname, { headers: { Accept: 'application/json' } });
      return r.json();
    })) as RewardJson;
    assert.deepEqual(
      doc.runs.map((r) => r.id),
      [runs[1], runs[0]],
      'the ended runs, newest first; the open one is not offered',
    );
    assert.ok(!doc.runs.some((r) => r.id === open));
    assert.equal(doc.score_min, -1, 'the range is the capability’s');
    assert.equal(doc.score_max, 1);
    const first = doc.runs[1]!;
    assert.equal(first.agent, 'codex');
    assert.ok(first.ended_at && first.outcome);
    assert.equal(first.evidence, 1);
    assert.match(first.summary, /drafted the notes <b>bold<\/b>/, 'the run’s summary');
    // Store text is text on the page: the markup shows as typed, no element is made of it.
    await runItem(runs[0]!)
      .getByText(/drafted the notes <b>bold<\/b>/)
      .waitFor();
    assert.equal(await page.locator('li b').count(), 0);
  });

  let commitBody = '';

  it('records a reward of 0.8 with a comment, signed with the passkey; another process counts it', async () => {
    const before = logLines().length;
    page.on('request', (r) => {
      if (r.url().endsWith('/decide/commit')) commitBody = r.postData() ?? '';
    });
    const item = runItem(runs[0]!);
    await page.locator(`#score-${runs[0]}`).fill('0.8');
    await page.locator(`#comment-${runs[0]}`).fill('clear notes, one link missing');
    await item.getByRole('button', { name: 'Record reward' }).click();
    await page
      .getByText(`Recorded: score 0.8 on run ${runs[0]}, signed with your passkey ada-laptop.`)
      .waitFor({ timeout: 15_000 });
    await runItem(runs[0]!)
      .getByText(/0\.8 by user:ada-laptop via browser.*clear notes, one link missing/)
      .waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(SHOTS, 'decide-reward.png'), fullPage: true });
    assert.equal(logLines().length, before + 1, 'one event written');

    const state = fresh();
    assert.equal(state.rewards.length, 1);
    const w = state.rewards[0]!;
    assert.equal(w.runId, runs[0]);
    assert.equal(w.score, 0.8);
    assert.equal(w.comment, 'clear notes, one link missing');
    assert.deepEqual(w.by, { kind: 'user', id: 'ada-laptop', channel: 'browser' });
    const ev = logLines()
      .map((l) => JSON.parse(l) as LoopxEvent)
      .find((e) => e.type === 'reward.added')!;
    assert.ok(ev.sig?.webauthn, 'signed by the passkey');
    assert.ok(!(state.ignored ?? []).some((i) => i.eventId === ev.id), 'its signature counts');

    const listed = (await json(['reward', 'list', '--goal-id', 'g'])) as {
      run_id: string;
      score: number;
      comment: string;
      by: string;
      via: string;
    }[];
    assert.deepEqual(
      listed.map((x) => [x.run_id, x.score, x.comment, x.by, x.via]),
      [[runs[0], 0.8, 'clear notes, one link missing', 'user:ada-laptop', 'browser']],
    );
    assert.doesNotMatch(ok(await run(['verify', '--goal-id', 'g'])).stdout, /ignored/);
  });

  it('the reward’s POST sent again finds its challenge spent and adds nothing', async () => {
    assert.ok(commitBody, 'the page posted its commit');
    const before = logLines().length;
    const again = await resendCommit(page, '/decide/commit', commitBody);
    assert.equal(again.status, 410);
    assert.equal(again.body.error?.reason, 'decision_challenge_spent');
    assert.equal(logLines().length, before);
    assert.equal(fresh().rewards.length, 1);
  });

  it('a score out of range is refused with the core’s reason, and nothing is written', async () => {
    const before = logLines().length;
    // What the capability itself says of such a score, asked directly.
    let core: LoopxError | undefined;
    try {
      prepareCall(
        Store.open(ws, { configDir: config }),
        'reward.add',
        { goalId: 'g', runId: runs[1], score: 1.5, comment: 'great' },
        { kind: 'user', id: 'ada-laptop', channel: 'browser' },
      );
    } catch (e) {
      core = e as LoopxError;
    }
    assert.ok(core instanceof LoopxError, 'the core refuses 1.5');
    const options = page.waitForResponse((r) => r.url().endsWith('/decide/options'));
    await page.locator(`#score-${runs[1]}`).fill('1.5');
    await page.locator(`#comment-${runs[1]}`).fill('great');
    await runItem(runs[1]!).getByRole('button', { name: 'Record reward' }).click();
    const answer = await options;
    assert.equal(answer.status(), 400);
    const error = ((await answer.json()) as { error: { reason: string; message: string } }).error;
    assert.equal(error.reason, core.reason);
    assert.equal(error.message, core.message);
    await runItem(runs[1]!).getByRole('alert').getByText(core.message).waitFor({ timeout: 15_000 });
    assert.equal(logLines().length, before, 'nothing was written');
    assert.equal(fresh().rewards.length, 1);
  });

  it('a run still open, or one the goal does not have, is refused before anything is signed', async () => {
    const before = logLines().length;
    const ask = (runId: string) =>
      page.evaluate(
        async (body) => {
          const r = await fetch('/decide/options', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
          });
          return {
            status: r.status,
            reason: ((await r.json()) as { error?: { reason: string } }).error?.reason,
          };
        },
        { workspace: workspaceId(ws), goal: 'g', decision: 'reward', run: runId, score: 0.5, shown: 'x' },
      );
    assert.deepEqual(await ask(open), { status: 403, reason: 'run_not_ended' });
    assert.deepEqual(await ask('run-nosuchrun'), { status: 404, reason: 'run_not_found' });
    assert.deepEqual(await ask(runs[1]!), { status: 409, reason: 'decision_stale' });
    assert.equal(logLines().length, before);
  });

  it('a run rewarded by someone else while the page showed it is looked at again', async () => {
    await page.goto(rewardUrl());
    await runItem(runs[1]!).waitFor({ timeout: 15_000 });
    ok(
      await loopx(
        [
          '--passphrase-fd',
          '3',
          'reward',
          'add',
          '--goal-id',
          'g',
          '--run-id',
          runs[1]!,
          '--score',
          '0.1',
          '--comment',
          'links broken',
        ],
        { cwd: ws, env, fd3: `${PASSPHRASE}\n` },
      ),
    );
    const before = logLines().length;
    await page.locator(`#score-${runs[1]}`).fill('0.9');
    await runItem(runs[1]!).getByRole('button', { name: 'Record reward' }).click();
    await page.getByText(/The goal changed while you decided; look again/).waitFor({ timeout: 15_000 });
    assert.equal(logLines().length, before, 'nothing was written');
    await page.getByRole('button', { name: 'Look again' }).click();
    await runItem(runs[1]!)
      .getByText(/0\.1 by user:alice via cli.*links broken/)
      .waitFor({ timeout: 15_000 });
    assert.deepEqual(
      fresh().rewards.map((w) => [w.runId, w.score, w.by.id]),
      [
        [runs[0], 0.8, 'ada-laptop'],
        [runs[1], 0.1, 'alice'],
      ],
    );
  });
});
