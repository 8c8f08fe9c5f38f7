/**
 * NODE_EXTRA_CA_CERTS through LoopX's shims: set aside for the CLI's own start-up (Node parses
 * every certificate it names before running any code, 40 ms a call for a system bundle, and LoopX
 * makes no TLS connection), and handed back to the commands `loopx exec` runs.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliShimScript, writeCliTarget } from '../../src/core/setup/cli-shim';
import { writeHookShim } from '../../src/core/hooks/shim';
import { restoreCaCerts, CA_CERTS_ASIDE } from '../../src/core/setup/shim-target';
import { BIN, Ws, json, ok, removeTempDirs, sh, shq, tempDir } from '../helpers/cli';
import { ShouldRunOutput } from '../../src/core/views/should-run-doc';

after(removeTempDirs);

/** A path Node complains about on stderr when it tries to load it at start-up (no such file). */
function missingCertificates(): string {
  return path.join(tempDir('loopx-ca-'), 'no-such-bundle.pem');
}

/** A runtime stand-in that prints what it was started with: the two variables, then its arguments. */
function envPrinter(): string {
  const f = path.join(tempDir('loopx-ca-'), 'print-env.js');
  fs.writeFileSync(
    f,
    `process.stdout.write(JSON.stringify([process.env.NODE_EXTRA_CA_CERTS ?? null, process.env.${CA_CERTS_ASIDE} ?? null, process.argv.slice(2)]));\n`,
  );
  return f;
}

describe('NODE_EXTRA_CA_CERTS and the shims', () => {
  it('the loopx command and the hook shim start the runtime without it, keeping it aside', async () => {
    const certs = missingCertificates();
    const printer = envPrinter();
    const bin = tempDir('loopx-ca-bin-');
    const target = writeCliTarget(bin, { node: process.execPath, cli: printer });
    fs.writeFileSync(path.join(bin, 'loopx'), cliShimScript(target), { mode: 0o755 });
    const hookDir = tempDir('loopx-ca-hook-');
    const hook = writeHookShim(hookDir, { node: process.execPath, cli: printer });
    const env = { NODE_EXTRA_CA_CERTS: certs };
    const viaCli = ok(await sh(`${shq(path.join(bin, 'loopx'))} status`, { cwd: bin, env }));
    assert.deepEqual(JSON.parse(viaCli.stdout), [null, certs, ['status']]);
    const viaHook = ok(await sh(`${shq(hook)} pre-tool-use </dev/null`, { cwd: hookDir, env }));
    assert.deepEqual(JSON.parse(viaHook.stdout), [null, certs, ['hook', 'pre-tool-use']]);
    const without = ok(
      await sh(`env -u NODE_EXTRA_CA_CERTS ${shq(path.join(bin, 'loopx'))} status`, { cwd: bin }),
    );
    assert.deepEqual(JSON.parse(without.stdout)[1], null, 'nothing set aside when there was nothing');
  });

  it('restoreCaCerts gives it back, and never overrides one set since', () => {
    const env: NodeJS.ProcessEnv = { [CA_CERTS_ASIDE]: '/a.pem' };
    restoreCaCerts(env);
    assert.deepEqual(env, { NODE_EXTRA_CA_CERTS: '/a.pem' });
    const set: NodeJS.ProcessEnv = { [CA_CERTS_ASIDE]: '/a.pem', NODE_EXTRA_CA_CERTS: '/b.pem' };
    restoreCaCerts(set);
    assert.deepEqual(set, { NODE_EXTRA_CA_CERTS: '/b.pem' });
  });

  it('through the installed command, Node never reads it, and the command exec runs gets it back', async () => {
    const certs = missingCertificates();
    const ws = new Ws();
    ok(await ws.run('project_prompt', 'create', '--title', 'Certs', '--goal-id', 'g'));
    ok(await ws.addTodo('g', 'env', 'Show the certificates', 'printenv NODE_EXTRA_CA_CERTS'));
    const contract = json(await ws.run('--json', 'quota', 'should-run', '--goal-id', 'g'), ShouldRunOutput);
    const cid = contract.interaction_contract.id!;
    const bin = tempDir('loopx-ca-bin-');
    const target = writeCliTarget(bin, { node: process.execPath, cli: BIN });
    fs.writeFileSync(path.join(bin, 'loopx'), cliShimScript(target), { mode: 0o755 });
    const r = ok(
      await sh(
        `${shq(path.join(bin, 'loopx'))} exec --contract ${cid} --todo env -- printenv NODE_EXTRA_CA_CERTS`,
        { cwd: ws.dir, env: { NODE_EXTRA_CA_CERTS: certs } },
      ),
    );
    assert.match(r.stdout, new RegExp(`^${certs.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'));
    assert.doesNotMatch(r.stderr, /extra certs/i, 'Node loaded the file');
    // Called as `node bin/loopx.js` (no shim), Node reads it at start-up, as for any Node program.
    const direct = await sh(`${shq(process.execPath)} ${shq(BIN)} --version`, {
      cwd: ws.dir,
      env: { NODE_EXTRA_CA_CERTS: certs },
    });
    assert.match(direct.stderr, /extra certs/i, 'the stand-in is a file Node would complain about');
  });
});
