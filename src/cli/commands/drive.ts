/**
 * `loopx drive` and `loopx lane`: LoopX runs the agents. A lane binds a runtime the signed policy
 * declares to a goal; `loopx drive` keeps every lane going until it is stopped (SIGINT, SIGTERM),
 * and `--install-service` has the user's service manager keep `loopx drive` going.
 */
import type { Command } from 'commander';
import * as fs from 'node:fs';
import type { DriveEvent, DriveStatus } from '../../core/index';
import {
  addLane,
  checkId,
  Driver,
  driveStatus,
  installService,
  LaneSpec,
  readLanes,
  refused,
  removeLane,
  resumeLane,
  RUNTIME_NAME,
  runCommand,
  serviceKey,
  startNotifier,
  servicePlan,
  uninstallService,
  usageError,
} from '../../core/index';
import type { CliContext } from '../context';
import { EXIT } from '../context';
import type { Act } from '../define';
import { count, example, runningCli } from '../define';
import { driveStatusText, laneListText } from '../text/drive';

/** Runs the driver in this process until SIGINT or SIGTERM; each lane's steps go to stderr. */
async function drive(ctx: CliContext, o: { lane?: string[]; untilIdle?: boolean }): Promise<number> {
  const store = ctx.store();
  for (const l of o.lane ?? []) checkId(l, '--lane');
  const say = (e: DriveEvent) =>
    ctx.io.stderr(`loopx drive: ${e.lane}: ${e.kind.replace(/_/g, ' ')}: ${e.message}\n`);
  const driver = new Driver({
    store,
    only: o.lane,
    untilIdle: o.untilIdle,
    env: ctx.io.env,
    loopx: { node: process.execPath, cli: runningCli() },
    onEvent: (e) => (ctx.json ? ctx.io.stdout(`${JSON.stringify(e)}\n`) : say(e)),
  });
  const lanes = readLanes(store).lanes.filter((l) => !o.lane || o.lane.includes(l.name));
  if (lanes.length === 0)
    ctx.note(
      'no lanes set up yet: add one with `loopx lane add --goal-id G --runtime R`; the driver waits for it',
    );
  const onSignal = () => driver.stop();
  const onHangup = () => driver.wake();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onHangup);
  // The lanes' machine is the one awake at night: it tells the person what stopped for them.
  const notifier = startNotifier({
    configDir: ctx.configDir(),
    env: ctx.io.env,
    log: (line) => ctx.io.stderr(`loopx notify: ${line}\n`),
  });
  try {
    await driver.run();
  } finally {
    await notifier.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onHangup);
  }
  return EXIT.ok;
}

function serviceCommand(ctx: CliContext, install: boolean): void {
  const store = ctx.store();
  const workspace = fs.realpathSync(store.workspace);
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'LOOPX_CONFIG_DIR'] as const) if (ctx.io.env[k]) env[k] = ctx.io.env[k]!;
  const spec = {
    workspace,
    node: process.execPath,
    cli: runningCli(),
    env,
    key: serviceKey(workspace),
    home: ctx.io.env.HOME ?? '',
  };
  const plan = servicePlan(process.platform, spec, ctx.io.env);
  const result = install ? installService(plan, runCommand) : uninstallService(plan, runCommand);
  ctx.print({ platform: plan.platformName, ...result }, () =>
    [
      install
        ? `${plan.platformName}: wrote ${result.file}${'started' in result && result.started ? ' and started it' : ''}`
        : `${plan.platformName}: ${'removed' in result && result.removed ? 'removed' : 'nothing to remove at'} ${result.file}`,
      ...result.notes,
    ].join('\n'),
  );
}

export function registerDriveCommands(program: Command, act: Act) {
  const driveCmd = example(
    program
      .command('drive')
      .description(
        'run the agents: keep every lane going until stopped (Ctrl-C); each lane sleeps until something matters',
      )
      .option('--lane <name...>', 'only these lanes')
      .option('--until-idle', 'return once every lane waits for a person or is stopped (scripts, CI)')
      .option(
        '--install-service',
        'have your user service manager run `loopx drive` for this workspace (systemd, launchd)',
      )
      .option('--uninstall-service', 'remove that service')
      .action(
        act(
          (
            ctx,
            o: { lane?: string[]; untilIdle?: boolean; installService?: boolean; uninstallService?: boolean },
          ) => {
            if (o.installService && o.uninstallService)
              throw usageError('--install-service and --uninstall-service: choose one');
            if (o.installService || o.uninstallService) return serviceCommand(ctx, !!o.installService);
            return drive(ctx, o);
          },
        ),
      ),
    'loopx drive',
    'loopx drive --lane docs',
    'loopx drive --until-idle',
    'loopx drive --install-service',
  );
  example(
    driveCmd
      .command('status')
      .description('every lane: its goal, runtime, worktree, state, current turn, last outcome and spend')
      .action(
        act((ctx) => {
          const doc: DriveStatus = driveStatus(ctx.store());
          ctx.print(doc, () => driveStatusText(doc));
        }),
      ),
    'loopx drive status',
    'loopx drive status --json | jq ".lanes[] | {name, status}"',
  );

  const lane = example(
    program.command('lane').description('lanes: a runtime of the signed policy working on one goal'),
    'loopx lane add docs --goal-id G --runtime claude',
    'loopx lane list',
  );
  example(
    lane
      .command('add <name>')
      .description(
        'set up a lane on this machine (a runtime runs only once a person signed it in the policy)',
      )
      .requiredOption('--goal-id <id>', 'the goal it works on')
      .requiredOption('--runtime <name>', 'a runtime the policy declares')
      .option(
        '--todos-per-turn <n>',
        'todos one turn takes (default 1: lanes on one goal share it)',
        count('--todos-per-turn'),
      )
      .action(
        act((ctx, name: string, o: { goalId: string; runtime: string; todosPerTurn?: number }) => {
          checkId(name, 'lane name');
          if (!RUNTIME_NAME.test(o.runtime))
            throw usageError(`--runtime ${JSON.stringify(o.runtime)}: a runtime name is a-z, 0-9 and -`, {
              reason: 'bad_runtime_name',
            });
          const store = ctx.store();
          const goalId = o.goalId;
          store.load(goalId);
          if (o.todosPerTurn !== undefined && o.todosPerTurn > 5)
            throw usageError('--todos-per-turn: at most 5 (a contract lists at most 5 todos)');
          const spec = addLane(
            store,
            LaneSpec.parse({
              v: 1,
              name,
              goalId,
              runtime: o.runtime,
              ...(o.todosPerTurn ? { todosPerTurn: o.todosPerTurn } : {}),
              createdAt: new Date(store.now()).toISOString(),
            }),
          );
          const signed = store.policy().runtimes?.[o.runtime];
          if (!signed)
            ctx.warn([
              `runtime ${o.runtime} is not in the signed policy: the lane waits until a person declares it under "runtimes" in .loopx/policy.json and signs it`,
            ]);
          ctx.print(spec, () => `added lane ${name}: runtime ${o.runtime} on goal ${goalId}`);
        }),
      ),
    'loopx lane add docs --goal-id G --runtime claude',
  );
  example(
    lane
      .command('list')
      .description('the lanes set up here')
      .action(
        act((ctx) => {
          const { lanes, problems } = readLanes(ctx.store());
          ctx.warn(problems);
          ctx.print(lanes, () => laneListText(lanes));
        }),
      ),
    'loopx lane list --json',
  );
  example(
    lane
      .command('remove <name>')
      .description('remove a lane (a running driver ends it after its current turn)')
      .action(
        act((ctx, name: string) => {
          removeLane(ctx.store(), name);
          ctx.print({ removed: name }, () => `removed lane ${name}`);
        }),
      ),
    'loopx lane remove docs',
  );
  example(
    lane
      .command('resume <name>')
      .description('give a lane that stopped after failed turns another chance')
      .action(
        act((ctx, name: string) => {
          const store = ctx.store();
          if (!readLanes(store).lanes.some((l) => l.name === name))
            throw refused(`no lane ${name} here`, { reason: 'lane_not_found' });
          resumeLane(store, name);
          ctx.print({ resumed: name }, () => `lane ${name} resumes at its driver's next look`);
        }),
      ),
    'loopx lane resume docs',
  );
}
