/**
 * The .vsix is ready for the Marketplace and Open VSX: `vsce package` prints no warning (nothing
 * hides them: no --allow-missing-repository), and the manifest has what the galleries show: a
 * 128x128 PNG icon, keywords, repository, bugs, homepage, banner; and it is a workspace extension.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, need, removeTempDirs, run, tempDir } from '../helpers/install';

interface Packaged {
  file: string;
  files: string[];
  output: string;
}
const REPO_URL = 'https://github.com/loopx/loopx-vscode';
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));

/** Width and height from a PNG's IHDR chunk (right after the 8-byte signature). */
function pngSize(buf: Buffer): { width: number; height: number } {
  assert.ok(
    buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
    'a PNG',
  );
  assert.equal(buf.toString('latin1', 12, 16), 'IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

describe('the packaged extension (Marketplace and Open VSX)', () => {
  let res: Packaged;
  let dir = '';
  let required: string[] = [];
  before(async () => {
    need('unzip');
    const mod = await import(pathToFileURL(path.join(REPO, 'scripts', 'build', 'package.mjs')).href);
    required = mod.REQUIRED;
    dir = tempDir('loopx-package-');
    res = mod.packageVsix({ out: path.join(dir, 'loopx.vsix'), build: false }) as Packaged;
  });
  after(removeTempDirs);

  it('packs with no vsce warning, and nothing that hides one', () => {
    assert.match(res.output, /DONE\s+Packaged:/);
    assert.doesNotMatch(res.output, /WARNING/i);
    const script = fs.readFileSync(path.join(REPO, 'scripts', 'build', 'package.mjs'), 'utf8');
    assert.doesNotMatch(script, /--allow-missing-repository|--allow-star-activation|--skip-license/);
  });

  it('has a 128x128 PNG icon, packed and required', () => {
    assert.equal(pkg.icon, 'media/icon.png');
    assert.deepEqual(pngSize(fs.readFileSync(path.join(REPO, pkg.icon))), { width: 128, height: 128 });
    assert.ok(required.includes('media/icon.png'));
    assert.ok(res.files.includes('media/icon.png'));
    assert.ok(fs.existsSync(path.join(REPO, 'scripts', 'build', 'make-icon.mjs')), 'the script that made it');
  });

  it('names its repository, bugs, homepage, keywords and banner', () => {
    assert.deepEqual(pkg.repository, { type: 'git', url: REPO_URL });
    assert.deepEqual(pkg.bugs, { url: `${REPO_URL}/issues` });
    assert.equal(pkg.homepage, `${REPO_URL}#readme`);
    assert.ok(Array.isArray(pkg.keywords) && pkg.keywords.length >= 5 && pkg.keywords.length <= 30);
    assert.match(pkg.galleryBanner.color, /^#[0-9a-f]{6}$/i);
    assert.ok(['dark', 'light'].includes(pkg.galleryBanner.theme));
    // What the gallery reads: the .vsix manifest carries them.
    const manifest = run('unzip', ['-p', res.file, 'extension.vsixmanifest'], {
      cwd: dir,
      env: process.env,
    }).stdout;
    assert.ok(manifest.includes('extension/media/icon.png'), 'icon in the gallery manifest');
    assert.ok(manifest.includes(REPO_URL), 'repository in the gallery manifest');
  });

  it("links the README's pictures to the repository, so the gallery can show them", () => {
    const readme = run('unzip', ['-p', res.file, 'extension/readme.md'], {
      cwd: dir,
      env: process.env,
    }).stdout;
    assert.ok(readme.includes(`](${REPO_URL}/raw/HEAD/docs/screenshots/`), 'absolute image links');
    assert.doesNotMatch(readme, /!\[[^\]]*\]\((?!https:)/, 'no relative image left');
  });

  it("is a workspace extension and contributes the 'loopx' PATH commands", () => {
    assert.deepEqual(pkg.extensionKind, ['workspace']);
    const cmds = pkg.contributes.commands as { command: string; title: string; category: string }[];
    const titles = Object.fromEntries(cmds.map((c) => [c.command, `${c.category}: ${c.title}`]));
    assert.equal(titles['loopx.installCli'], "LoopX: Install 'loopx' Command in PATH");
    assert.equal(titles['loopx.uninstallCli'], "LoopX: Uninstall 'loopx' Command from PATH");
  });
});
