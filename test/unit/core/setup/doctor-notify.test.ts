/**
 * `loopx doctor`'s `notify` check (src/core/setup/doctor.ts): the channels' health comes in from
 * the caller (setup does not depend on reach); a failing channel is a warning naming it, its last
 * error and when, with the command that tries it again.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { DoctorInput, NotifyFacts } from '../../../../src/core/setup/doctor';
import { doctor } from '../../../../src/core/setup/doctor';
import { removeTempDirs, tempDir } from '../../../helpers/store';

after(removeTempDirs);

function notifyCheck(notify?: NotifyFacts) {
  const i: DoctorInput = {
    entry: process.argv[1] ?? '',
    execPath: process.execPath,
    nodeVersion: '22.1.0',
    env: { PATH: '' },
    cwd: tempDir(),
    configDir: path.join(tempDir('loopx-doctor-cfg-'), 'loopx'),
    runtimeRuns: () => true,
    ...(notify ? { notify } : {}),
  };
  return doctor(i).checks.find((c) => c.id === 'notify')!;
}

describe('doctor: notification channels', () => {
  it('none set up, or all well: ok', () => {
    assert.equal(notifyCheck().status, 'ok');
    assert.equal(notifyCheck({ channels: [] }).status, 'ok');
    const well = notifyCheck({ channels: [{ name: 'phone', status: 'ok' }] });
    assert.equal(well.status, 'ok');
    assert.match(well.message, /phone/);
  });

  it('a failing channel is a warning naming it, its last error and when, with its fix', () => {
    const c = notifyCheck({
      channels: [
        { name: 'phone', status: 'ok' },
        {
          name: 'team',
          status: 'failing',
          last_error: 'answered 500',
          last_error_at: '2026-11-30T10:00:00.000Z',
        },
      ],
    });
    assert.equal(c.status, 'warn');
    assert.equal(c.message, 'channel team is failing: answered 500 (at 2026-11-30T10:00:00.000Z)');
    assert.equal(c.fix, 'loopx notify test --name team');
  });

  it('a channels.json that does not read is a warning that says so', () => {
    const c = notifyCheck({
      channels: [],
      problem: '/cfg/channels.json: field webhooks.0.url: must be http or https',
    });
    assert.equal(c.status, 'warn');
    assert.match(c.message, /field webhooks\.0\.url/);
  });
});
