/**
 * docs/state-interaction-model.md names, for every rule, where it is enforced and the tests that
 * try to break it. This checks that the document keeps its word: every rule names at least one
 * test, every named test file exists and holds a test with exactly that title (or that part of a
 * templated title), and every source file named exists.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const DOC = path.join(REPO, 'docs', 'state-interaction-model.md');
const text = fs.readFileSync(DOC, 'utf8');

/** `test/x.test.ts` — “title” */
const PROOF = /`(test\/[^`]+\.test\.ts)` — “([^”]+)”/g;
/** A rule: from its bold `**R<n>.` heading to the next one or the next section. */
function rules(doc: string): { name: string; body: string }[] {
  const section = doc.split(/^## The rules, and where each is enforced$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split(/^(?=\*\*R\d+\.)/m)
    .filter((b) => b.startsWith('**R'))
    .map((body) => ({ name: /^\*\*(R\d+\.[^*]*)\*\*/.exec(body)?.[1] ?? body.slice(0, 40), body }));
}

/** The titles a test file declares, as written between the quotes of it(...)/test(...)/describe(...). */
function testTitles(file: string): string[] {
  const src = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  const call = /\b(?:it|test|describe)\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g;
  for (const m of src.matchAll(call)) out.push(m[2]!.replace(/\\(['"`\\])/g, '$1'));
  return out;
}

describe('docs/state-interaction-model.md', () => {
  const all = rules(text);

  it('has the four actors and its rules', () => {
    for (const actor of ['**Goal**', '**Executor**', '**User**', '**Dashboard**'])
      assert.ok(text.includes(`| ${actor} |`), `the actors table names ${actor}`);
    assert.ok(all.length >= 10, `found ${all.length} rules`);
    assert.doesNotMatch(text, /[A-Z_]+_PROOFS/, 'no placeholder is left in the document');
  });

  it('every rule names at least one test and where it is enforced', () => {
    for (const r of all) {
      assert.ok([...r.body.matchAll(PROOF)].length > 0, `${r.name} names no test`);
      assert.match(r.body, /`src\/[^`]+`/, `${r.name} names no source file`);
    }
  });

  it('every named test exists with that title', () => {
    const proofs = [...text.matchAll(PROOF)];
    assert.ok(proofs.length >= 20, `found ${proofs.length} proofs`);
    for (const [, file, title] of proofs) {
      const abs = path.join(REPO, file!);
      assert.ok(fs.existsSync(abs), `${file} does not exist`);
      const titles = testTitles(abs);
      assert.ok(
        titles.some((t) => t === title || (t.includes('${') && t.includes(title!))),
        `${file} has no test titled “${title}”`,
      );
    }
  });

  it('every source file or folder it names exists', () => {
    for (const [, p] of text.matchAll(/`(src\/[^`\s]+)`/g)) {
      assert.ok(fs.existsSync(path.join(REPO, p!.replace(/,$/, ''))), `${p} does not exist`);
    }
  });
});
