/**
 * The editor runs the agents, in the real host: a lane set up with the CLI on a runtime the person
 * signed in the policy (a model-less script that runs its contract's commands, then its finish
 * command). Start Agents runs the core's Driver in the extension host: the lane does its todo, the
 * tree, the status bar and the dashboard show it working and then stopped; Stop Agents stops the
 * driver mid-turn (the run ends `interrupted`, the turn's command never finishes), and no driver is
 * left (`loopx drive status`).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DriveStatus } from '../../../src/core/index';
import { readLaneState, Store, writeLaneState } from '../../../src/core/index';
import type { LoopxApi } from '../../../src/extension/extension';
import { api, loopxCli, until, withStub, workspaceDir } from './util';

const GOAL = 'drive-it';
const LANE = 'it-lane';
const RUNTIME = 'it-script';

/**
 * What a well-behaved agent does, in milliseconds (test/helpers/drive-kit.ts's SCRIPT_RUNTIME,
 * which the host's bundle cannot import): each listed command, then the finish command.
 */
const SCRIPT = `
const { execSync } = require('node:child_process');
const c = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')).interaction_contract;
let failed = 0;
for (const a of c.cli_channel.next_cli_actions) {
  try { execSync(a, { stdio: 'inherit', shell: '/bin/sh' }); } catch { failed++; }
}
if (c.agent_channel.finish_with) execSync(c.agent_channel.finish_with, { stdio: 'inherit', shell: '/bin/sh' });
process.exit(failed ? 1 : 0);
`;

function cli(...args: string[]): string {
  const r = loopxCli(args);
  assert.equal(r.status, 0, `loopx ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const driveStatus = (): DriveStatus => JSON.parse(cli('--json', 'drive', 'status')) as DriveStatus;
const lane = () => driveStatus().lanes.find((l) => l.name === LANE);

/** policy.json with the runtime declared, signed through Sign Workspace Policy (its modal answered Sign). */
async function signRuntime(store: Store): Promise<void> {
  const policy = JSON.parse(fs.readFileSync(store.policyPath, 'utf8')) as Record<string, unknown>;
  const runtimes = { [RUNTIME]: { command: [process.execPath, '-e', SCRIPT, '{contract_file}'] } };
  fs.writeFileSync(store.policyPath, `${JSON.stringify({ ...policy, runtimes }, null, 2)}\n`);
  const answer = (async (_m: string, ...rest: unknown[]) => {
    const opts = rest[0] as vscode.MessageOptions | undefined;
    return typeof opts === 'object' && opts?.modal ? 'Sign' : undefined;
  }) as unknown as typeof vscode.window.showWarningMessage;
  await withStub('showWarningMessage', answer, () =>
    vscode.commands.executeCommand('loopx.signPolicy', { folder: workspaceDir() }),
  );
  assert.ok(store.policy().runtimes?.[RUNTIME], 'the runtime is in the signed policy');
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

/** The tree's row of lane `name`, as VS Code would show it. */
function laneItem(a: LoopxApi, name: string): vscode.TreeItem | undefined {
  const agents = a.tree.getChildren().find((n) => n.kind === 'agents');
  const row = agents && a.tree.getChildren(agents).find((n) => n.kind === 'lane' && n.report.name === name);
  return row && a.tree.getTreeItem(row);
}

export function registerDriveAgentsTests(): void {
  describe('LoopX runs the agents from VS Code (loopx drive in the extension host)', function () {
    this.timeout(120_000);

    it('Start Agents runs the lane: its todo done, the tree, status bar and dashboard follow; Stop Agents stops it mid-turn', async () => {
      const a = await api();
      const ws = workspaceDir();
      const store = new Store(ws);
      cli('goal', 'create', '--goal-id', GOAL, '--title', 'Driven from the editor');
      cli(
        'todo',
        'add',
        '--goal-id',
        GOAL,
        '--todo-id',
        'one',
        '--title',
        'One',
        '--action',
        'echo lane > drive-it.txt',
      );
      await signRuntime(store);
      cli('lane', 'add', LANE, '--goal-id', GOAL, '--runtime', RUNTIME);
      const laneRow = () => laneItem(a, LANE);
      await until(
        'the lane in the tree, not running',
        () => laneRow()?.description === 'not running',
        10_000,
      );
      await vscode.commands.executeCommand('loopx.openDashboard');

      const started = await vscode.commands.executeCommand<{ started: string[] }>('loopx.startAgents');
      assert.deepEqual(started?.started, [ws]);
      assert.deepEqual(a.agents.runningFolders, [ws]);
      assert.equal(driveStatus().driver.pid, process.pid, 'the driver is this window’s');
      await until('todo one done by the lane', () => fs.existsSync(path.join(ws, 'drive-it.txt')), 30_000);
      await until('the lane stopped: every agent todo done', () => lane()?.status === 'stopped', 30_000);
      const run = store.load(GOAL).state.runs[0]!;
      assert.deepEqual([run.agent, run.outcome], [`lane:${LANE}`, 'succeeded']);
      await until('the tree saying so', () => laneRow()?.description === 'stopped', 10_000);
      await until(
        'the dashboard listing the lane',
        () => {
          const m = a.dashboard.lastPosted;
          return m?.type === 'status' && m.agents?.rows.find((r) => r.name === LANE)?.state === 'stopped';
        },
        20_000,
      );

      // Wake Agents: every lane of this window's driver looks again (and finds nothing new to do).
      assert.deepEqual(await vscode.commands.executeCommand('loopx.wakeAgents'), [LANE]);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(lane()?.status, 'stopped');
      assert.equal(store.load(GOAL).state.runs.length, 1, 'no turn without work');

      // A turn that takes a while: the status bar counts it, then Stop Agents ends it.
      cli(
        'todo',
        'add',
        '--goal-id',
        GOAL,
        '--todo-id',
        'slow',
        '--title',
        'Slow',
        '--action',
        'sleep 20; echo late > late.txt',
      );
      await until('the lane working', () => lane()?.status === 'working', 30_000);
      await until(
        'the status bar counting it',
        () => /\$\(sync~spin\) 1 agent working$/.test(a.statusBar.text),
        10_000,
      );
      await until('the tree saying so', () => laneRow()?.description === 'working', 10_000);
      const stopped = await vscode.commands.executeCommand<string[]>('loopx.stopAgents');
      assert.deepEqual(stopped, [ws]);
      assert.deepEqual(a.agents.runningFolders, []);
      assert.deepEqual(driveStatus().driver, { running: false }, 'no driver left');
      const slow = store
        .load(GOAL)
        .state.runs.find((r) => r.contract?.actions.some((x) => x.todoId === 'slow'));
      assert.equal(slow?.outcome, 'interrupted');
      assert.equal(
        store.load(GOAL).state.todos.find((t) => t.id === 'slow')?.status,
        'open',
        'its claim given back',
      );
      await new Promise((r) => setTimeout(r, 1000));
      assert.ok(!fs.existsSync(path.join(ws, 'late.txt')), 'the turn’s command was stopped');
      await until('the tree saying not running', () => laneRow()?.description === 'not running', 10_000);
      assert.doesNotMatch(a.statusBar.text, /agent/);

      // Stop with nothing running says so, and stops nothing.
      const said: string[] = [];
      const info = (async (m: string) => {
        said.push(m);
        return undefined;
      }) as unknown as typeof vscode.window.showInformationMessage;
      assert.deepEqual(
        await withStub('showInformationMessage', info, () =>
          vscode.commands.executeCommand('loopx.stopAgents'),
        ),
        [],
      );
      assert.deepEqual(said, ['No agents run in this window.']);
      cli('lane', 'remove', LANE);
    });

    it('Start Agents leaves a folder that another loopx drive drives to it, naming its process', async () => {
      const ws = workspaceDir();
      // A goal with nothing to do yet: the other driver only waits on it.
      cli('goal', 'create', '--goal-id', `${GOAL}-2`, '--title', 'Driven elsewhere');
      cli('lane', 'add', `${LANE}-2`, '--goal-id', `${GOAL}-2`, '--runtime', RUNTIME);
      const { spawn } = await import('node:child_process');
      const repo = process.env.LOOPX_REPO ?? path.resolve(__dirname, '..', '..');
      const other = spawn(
        process.execPath,
        [path.join(repo, 'bin', 'loopx.js'), '--workspace', ws, 'drive'],
        {
          env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', LOOPX_WORKSPACE: '' },
          stdio: 'ignore',
        },
      );
      try {
        await until('the other driver', () => driveStatus().driver.running || undefined, 20_000);
        const said: string[] = [];
        const info = (async (m: string) => {
          said.push(m);
          return undefined;
        }) as unknown as typeof vscode.window.showInformationMessage;
        const r = await withStub('showInformationMessage', info, () =>
          vscode.commands.executeCommand<{ started: string[]; elsewhere: { pid?: number }[] }>(
            'loopx.startAgents',
          ),
        );
        assert.deepEqual(r?.started, []);
        assert.deepEqual(
          r?.elsewhere.map((e) => e.pid),
          [other.pid],
        );
        assert.match(
          said.join('\n'),
          new RegExp(`loopx drive \\(process ${other.pid}\\) already runs the agents`),
        );
        const a = await api();
        const store = new Store(ws);
        const laneRow = (name: string) => laneItem(a, name);
        assert.deepEqual(a.agents.runningFolders, []);
        // The lane the other driver runs waits for a plan: the status bar's tooltip names it, and
        // the person is warned once, in LoopX's words (a pending gate would be the gate's notification).
        await until(
          'the status bar naming the lane',
          () =>
            a.statusBar.tooltip.includes(
              `Lanes waiting for you:\n  ${LANE}-2: the goal has no agent todos yet`,
            ),
          20_000,
        );
        const warned = await until(
          'the warning',
          () => a.laneNotifier.shown.find((w) => w.lane === `${LANE}-2`),
          10_000,
        );
        assert.equal(warned.need.kind, 'other');
        assert.match(
          warned.text,
          new RegExp(`^Lane ${LANE}-2 waits for you: the goal has no agent todos yet`),
        );
        assert.deepEqual(warned.buttons, ['Show Agents']);
        // A lane's state file written by another process shows in the tree: only the file watcher
        // follows .loopx/local/drive/ (the once-a-second look reads no lane file), so without it
        // the tree never changes. How soon is printed, not asserted: a shared machine's load moves
        // it (the refresh waits at most a second after the first event, then VS Code's watcher).
        const state = readLaneState(store, `${LANE}-2`, new Date());
        const wake = new Date(Date.now() + 3_600_000);
        const t0 = Date.now();
        writeLaneState(store, `${LANE}-2`, {
          ...state,
          status: 'asleep',
          needsPerson: false,
          until: wake.toISOString(),
          updatedAt: new Date().toISOString(),
        });
        const hhmm = `${String(wake.getHours()).padStart(2, '0')}:${String(wake.getMinutes()).padStart(2, '0')}`;
        await until(
          'the tree showing the new state',
          () => laneRow(`${LANE}-2`)?.description === `asleep · ${hhmm}`,
          5000,
        );
        const ms = Date.now() - t0;
        console.log(`      (a lane's state written by another process showed in the tree after ${ms} ms)`);
      } finally {
        other.kill('SIGTERM');
        await until('the other driver gone', () => !driveStatus().driver.running || undefined, 20_000);
        cli('lane', 'remove', `${LANE}-2`);
      }
    });
  });
}
