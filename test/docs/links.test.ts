/**
 * The pages hold together: every relative link in README.md and in the pages under docs/ reaches
 * a file that exists (and, for a #fragment, a heading of that page), and nothing in the
 * repository points into a folder outside it (`../shared/`) or at a design file it does not have.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, anchors, docPages, isExternal, links } from '../helpers/readme';

const read = (rel: string) => fs.readFileSync(path.join(REPO, rel), 'utf8');

describe('links in the docs', () => {
  it('every relative link in README.md and docs/ points at a file that exists', () => {
    const pages = docPages();
    assert.ok(pages.length > 10, `found ${pages.length} pages`);
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = read(page);
      for (const l of links(text)) {
        if (isExternal(l.target)) continue;
        checked++;
        const [file, fragment] = l.target.split('#') as [string, string | undefined];
        const abs = file
          ? path.resolve(REPO, path.dirname(page), decodeURIComponent(file))
          : path.join(REPO, page);
        const where = `${page}:${l.line}: ${l.target}`;
        if (!abs.startsWith(REPO + path.sep)) broken.push(`${where} leaves the repository`);
        else if (!fs.existsSync(abs)) broken.push(`${where}: ${path.relative(REPO, abs)} does not exist`);
        else if (fragment && abs.endsWith('.md') && !anchors(fs.readFileSync(abs, 'utf8')).has(fragment))
          broken.push(`${where}: ${path.relative(REPO, abs)} has no heading #${fragment}`);
      }
    }
    assert.ok(checked > 50, `checked ${checked} links`);
    assert.deepEqual(broken, []);
  });

  it('no file in the repository mentions ../shared/ or DESIGN.md', () => {
    // Tracked files and new ones not yet committed (but not what .gitignore keeps out).
    const r = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const files = [...new Set(r.stdout.split('\0').filter(Boolean))];
    assert.ok(files.length > 100, `git lists ${files.length} files`);
    const found: string[] = [];
    for (const f of files) {
      const abs = path.join(REPO, f);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(abs);
      } catch {
        continue; // deleted in the working tree
      }
      if (!st.isFile()) continue;
      const buf = fs.readFileSync(abs);
      if (buf.includes(0)) continue; // binary
      buf
        .toString('utf8')
        .split('\n')
        .forEach((l, i) => {
          if (l.includes('../shared/') || l.includes('DESIGN.md')) found.push(`${f}:${i + 1}: ${l.trim()}`);
        });
    }
    // This file names both, to look for them: it is not a mention.
    const self = path.relative(REPO, __filename);
    assert.deepEqual(
      found.filter((f) => !f.startsWith(`${self}:`)),
      [],
    );
  });
});
