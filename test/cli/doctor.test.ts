/**
 * `loopx doctor` as a new user runs it: one line a check with the fix under each problem, the
 * JSON document with stable ids, exit 1 only when a check fails, and nothing written anywhere.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DOCTOR_CHECKS, DoctorDoc } from '../../src/core/index';
import { BIN, Ws, listTree, loopx, ok, removeTempDirs, tempDir } from '../helpers/cli';

after(removeTempDirs);

describe('loopx doctor', () => {
  it('a folder with no workspace and a fresh config folder: warnings with their fixes, exit 0, nothing written', async () => {
    const dir = tempDir();
    const config = path.join(tempDir(), 'cfg');
    const r = await loopx(['doctor'], {
      cwd: dir,
      env: { LOOPX_CONFIG_DIR: config, PATH: process.env.PATH! },
    });
    ok(r);
    assert.match(r.stdout, /^warn +workspace +no LoopX workspace at or above/m);
    assert.match(r.stdout, /^ +fix: loopx init/m);
    assert.match(r.stdout, /^warn +keys .*\n +fix: loopx key create$/m);
    assert.match(r.stdout, /^ok +node +Node\.js /m);
    assert.deepEqual(listTree(dir), []);
    assert.equal(fs.existsSync(config), false, 'doctor must not create the config folder');
  });

  it('--json: loopx.doctor/1 with every check id; a broken policy.json fails it and exits 1', async () => {
    const ws = new Ws();
    ok(await ws.run('init'));
    const good = await ws.json(DoctorDoc, 'doctor');
    assert.deepEqual(
      good.checks.map((c) => c.id),
      [...DOCTOR_CHECKS],
    );
    assert.equal(good.ok, true);
    fs.writeFileSync(ws.file('.loopx', 'policy.json'), '{ "v": 1, "nope": 1 }');
    const before = listTree(ws.dir);
    const r = await loopx(['--json', 'doctor'], { cwd: ws.dir });
    assert.equal(r.code, 1, r.stderr);
    const doc = DoctorDoc.parse(JSON.parse(r.stdout));
    assert.equal(doc.ok, false);
    const policy = doc.checks.find((c) => c.id === 'policy')!;
    assert.equal(policy.status, 'fail');
    assert.match(policy.message, /policy\.json: Unrecognized key: "nope"/);
    assert.deepEqual(listTree(ws.dir), before);
    const text = await ws.run('doctor');
    assert.equal(text.code, 1);
    assert.match(text.stdout, /^fail +policy /m);
    assert.match(text.stdout, /1 check failed/);
  });

  it('hooks installed with `hooks install --yes` check out: the shim and the CLI it runs are named', async () => {
    const ws = new Ws();
    ok(await ws.run('init'));
    ok(await ws.run('hooks', 'install', '--yes'));
    const doc = await ws.json(DoctorDoc, 'doctor');
    const hooks = doc.checks.find((c) => c.id === 'hooks')!;
    assert.equal(hooks.status, 'ok', hooks.message);
    assert.ok(hooks.message.includes(fs.realpathSync(BIN)), hooks.message);
  });

  it('--help says what the exit code means', async () => {
    const r = ok(await loopx(['doctor', '--help'], { cwd: tempDir() }));
    assert.match(
      r.stdout.replace(/\s+/g, ' '),
      /Exits 0 when no check fails \(warnings allowed\), 1 when one does/,
    );
  });
});
