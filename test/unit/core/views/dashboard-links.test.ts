/**
 * src/core/views/dashboard-links.ts: every dashboard message survives `vscodeLinkFor` ->
 * `parseDashboardLink`, hostile values are refused both ways, and `cliCommandFor` names the real
 * commands and flags.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cliCommandFor,
  parseDashboardLink,
  vscodeLinkFor,
  DASHBOARD_LINK_PREFIX,
} from '../../../../src/core/views/dashboard-links';
import type { Msg } from '../../../../src/core/views/dashboard-protocol';

/** What VS Code hands the URI handler: the path and the query of the link. */
function parse(link: string): Msg | undefined {
  const u = new URL(link);
  assert.equal(u.protocol, 'vscode:');
  assert.equal(u.host, 'loopx.loopx-vscode');
  return parseDashboardLink(u.pathname, u.searchParams);
}

const EVERY: Msg[] = [
  { type: 'ready' },
  { type: 'select-goal', goalId: 'payments' },
  { type: 'select-goal', goalId: 'payments', folder: '/home/a/My Project' },
  { type: 'reveal-goal', goalId: 'g-1_x' },
  { type: 'open-evidence', goalId: 'payments', evidenceId: 'ev-r1' },
  { type: 'approve-gate', goalId: 'payments', gateId: 'deploy' },
  { type: 'approve-gate', goalId: 'payments', gateId: 'deploy', folder: "/tmp/it's & <here>?#" },
  { type: 'reject-gate', goalId: 'payments', gateId: 'deploy' },
];

describe('dashboard links', () => {
  it('round-trips every message type', () => {
    for (const m of EVERY) {
      const link = vscodeLinkFor(m);
      assert.ok(link.startsWith(DASHBOARD_LINK_PREFIX + m.type), link);
      assert.deepEqual(parse(link), m, link);
    }
    assert.equal(
      vscodeLinkFor({ type: 'approve-gate', goalId: 'payments', gateId: 'deploy' }),
      'vscode://loopx.loopx-vscode/dashboard/approve-gate?goalId=payments&gateId=deploy',
    );
  });

  it('builds no link from a message the webview rule refuses', () => {
    for (const bad of [
      { type: 'approve-gate', goalId: '../x', gateId: 'deploy' },
      { type: 'approve-gate', goalId: 'payments', gateId: 'a b' },
      { type: 'approve-gate', goalId: 'payments' },
      { type: 'delete-goal', goalId: 'payments' },
      { type: 'select-goal', goalId: 'x', folder: 'a\u202eb' },
      { type: 'select-goal', goalId: 'x', extra: 1 },
    ])
      assert.throws(
        () => vscodeLinkFor(bad as unknown as Msg),
        /not a dashboard message/,
        JSON.stringify(bad),
      );
  });

  it('refuses hostile links', () => {
    const q = (s: string) => new URLSearchParams(s);
    const refused: [string, string][] = [
      ['/dashboard/approve-gate', 'goalId=payments'],
      ['/dashboard/approve-gate', 'goalId=payments&gateId=deploy&gateId=other'],
      ['/dashboard/approve-gate', 'goalId=payments&gateId=deploy&note=yes'],
      ['/dashboard/approve-gate', 'goalId=pay%0Aments&gateId=deploy'],
      ['/dashboard/approve-gate', 'goalId=%3Cimg%20src%3Dx%3E&gateId=deploy'],
      ['/dashboard/approve-gate', 'goalId=payments&gateId=deploy;rm%20-rf%20~'],
      ['/dashboard/approve-gate', 'goalId=payments&gateId=deploy&type=ready'],
      ['/dashboard/approve-gate', `goalId=${'a'.repeat(65)}&gateId=deploy`],
      ['/dashboard/select-goal', 'goalId=x&folder=%1b%5b31m'],
      ['/dashboard/select-goal', 'goalId=x&folder='],
      ['/dashboard/run-command', 'goalId=x'],
      ['/dashboard/constructor', ''],
      ['/dashboard/approve-gate/', 'goalId=payments&gateId=deploy'],
      ['/dashboard/../approve-gate', 'goalId=payments&gateId=deploy'],
      ['/other/approve-gate', 'goalId=payments&gateId=deploy'],
      ['/dashboard/ready', 'goalId=payments'],
      ['/dashboard/Approve-Gate', 'goalId=payments&gateId=deploy'],
    ];
    for (const [p, query] of refused)
      assert.equal(parseDashboardLink(p, q(query)), undefined, `${p}?${query}`);
  });

  it('cliCommandFor names the real commands, quoted for a shell', () => {
    assert.equal(
      cliCommandFor({ type: 'approve-gate', goalId: 'payments', gateId: 'deploy' }),
      'loopx gate approve --goal-id payments --gate-id deploy',
    );
    assert.equal(
      cliCommandFor({ type: 'reject-gate', goalId: 'payments', gateId: 'deploy' }),
      'loopx gate reject --goal-id payments --gate-id deploy',
    );
    assert.equal(
      cliCommandFor({ type: 'open-evidence', goalId: 'payments', evidenceId: 'ev-1' }),
      'loopx evidence list --goal-id payments',
    );
    assert.equal(
      cliCommandFor({ type: 'reveal-goal', goalId: 'payments' }),
      'loopx goal show --goal-id payments',
    );
    assert.equal(
      cliCommandFor({ type: 'select-goal', goalId: 'payments' }),
      'loopx goal show --goal-id payments',
    );
    assert.equal(cliCommandFor({ type: 'ready' }), undefined);
    assert.equal(
      cliCommandFor({ type: 'approve-gate', goalId: 'g', gateId: 'x', folder: "/tmp/it's here" }),
      `loopx --workspace '/tmp/it'\\''s here' gate approve --goal-id g --gate-id x`,
    );
    assert.equal(cliCommandFor({ type: 'approve-gate', goalId: '$(id)', gateId: 'x' } as Msg), undefined);
  });
});
