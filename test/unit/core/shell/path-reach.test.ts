/**
 * Where a command the allow list allows may reach (shell/path-reach.ts), on a real disk: `..`,
 * absolute paths, option values and symbolic links are followed to where they lead.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathCandidates, reachProblem } from '../../../../src/core/shell/path-reach';
import type { Reach } from '../../../../src/core/shell/path-reach';

const top = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-reach-')));
after(() => fs.rmSync(top, { recursive: true, force: true }));

const ws = path.join(top, 'ws');
const config = path.join(top, 'config');
for (const d of [path.join(ws, 'src'), path.join(ws, '.loopx', 'local'), config])
  fs.mkdirSync(d, { recursive: true });
fs.writeFileSync(path.join(ws, 'README.md'), '# x\n');
fs.symlinkSync('..', path.join(ws, 'up'));
fs.symlinkSync(config, path.join(ws, 'src', 'cfg'));
fs.symlinkSync(path.join('.loopx', 'local'), path.join(ws, 'cache'));
fs.symlinkSync('README.md', path.join(ws, 'readme-link'));

const where = (cwd = ws, more: Partial<Reach> = {}): Reach => ({
  root: ws,
  cwd,
  forbidden: [path.join(ws, '.loopx', 'local')],
  secret: [config],
  path,
  realpath: (p) => fs.realpathSync(p),
  ...more,
});

describe('path reach', () => {
  it('reads inside the workspace: plain words, relative paths, links that stay in', () => {
    for (const args of [
      [],
      ['-rn', 'TODO', 'src'],
      ['README.md', './src/../README.md', 'readme-link'],
      ['--include=*.ts', '-e', 'x', 'src/missing/deeper'],
      ['-la'],
      ['HEAD~3..main'],
    ])
      assert.equal(reachProblem(args, where()), undefined, args.join(' '));
    assert.equal(reachProblem(['..', '../README.md'], where(path.join(ws, 'src'))), undefined);
  });

  it('refuses paths that lead outside, into .loopx/local/ or to the config folder', () => {
    for (const args of [
      ['..'],
      [top],
      ['/etc/passwd'],
      ['src/../../config'],
      ['up'],
      ['up/config/keys'],
      ['src/cfg'],
      ['src/cfg/not-yet'],
      ['cache'],
      ['.loopx/local/writer'],
      ['--file=../x'],
      [`-f${config}/k`],
      ['-rf../x'],
      ['~/x'],
      ['~'],
    ])
      assert.ok(reachProblem(args, where()), args.join(' '));
  });

  it('refuses every command run outside the workspace, or in .loopx/local/', () => {
    for (const cwd of [top, config, path.join(ws, '.loopx', 'local'), path.join(ws, 'up'), '/'])
      assert.ok(reachProblem([], where(cwd)), cwd);
  });

  it('a config folder inside the workspace is neither read into nor read through a folder holding it', () => {
    const inner = path.join(ws, 'src', 'inner-config');
    fs.mkdirSync(inner, { recursive: true });
    const w = where(ws, { secret: [inner] });
    assert.ok(reachProblem(['src'], w));
    assert.ok(reachProblem(['src/inner-config/keys'], w));
    assert.ok(reachProblem([], w), 'a recursive read from the root would reach it');
    assert.equal(
      reachProblem(['README.md'], where(path.join(ws, 'src', '..'), { secret: [config] })),
      undefined,
    );
  });

  it('the candidates: every word, the value after =, what follows a short option letter', () => {
    assert.deepEqual(pathCandidates(['-f/etc/x', '--file=a', 'k=v', 'src']), [
      '-f/etc/x',
      '/etc/x',
      '--file=a',
      'a',
      'k=v',
      'v',
      'src',
    ]);
    assert.deepEqual(pathCandidates(['-rf../x', '-la']), ['-rf../x', 'f../x', '../x', '-la', 'a']);
  });
});
