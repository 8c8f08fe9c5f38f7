/**
 * docs/PERFORMANCE.md quotes one benchmark run: docs/performance/results.json, the committed copy
 * of what `npm run bench` wrote. Its generated blocks, rendered here in memory from that file,
 * must be exactly what the page holds: a figure edited by hand, or results.json replaced without
 * `npm run bench:doc`, fails with the block's name and the command that fixes it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import {
  BLOCKS,
  DOC,
  RESULTS,
  applyBlocks,
  framed,
  readBlocks,
  readResults,
  renderBlocks,
} from '../../scripts/docs/performance-doc';

const FIX =
  'run npm run bench:doc (scripts/docs/performance-doc.ts renders it from docs/performance/results.json)';

describe('docs/PERFORMANCE.md', () => {
  const doc = fs.readFileSync(DOC, 'utf8');
  const results = readResults(RESULTS);
  const rendered = renderBlocks(results);

  it('cites a whole benchmark run with its context', () => {
    assert.equal(results.schema, 'loopx.bench/1');
    assert.match(results.started, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'the start, in UTC');
    assert.match(results.machine.node, /^v\d+\./, 'the Node version');
    assert.equal(results.machine.load.length, 3, 'the load average at the start');
    assert.ok(results.targets.length > 0, 'the targets');
    for (const t of results.targets) assert.ok(t.name && t.target && 'met' in t, JSON.stringify(t));
  });

  it('has every block the renderer knows, each exactly as rendered from results.json', () => {
    const onPage = readBlocks(doc);
    for (const name of BLOCKS) {
      assert.ok(onPage.has(name), `<!-- generated:${name} --> is missing: add its markers, then ${FIX}`);
      assert.equal(onPage.get(name), framed(rendered[name]), `the block ${name} differs: ${FIX}`);
    }
    for (const name of onPage.keys())
      assert.ok(
        (BLOCKS as readonly string[]).includes(name),
        `<!-- generated:${name} --> is no block the renderer knows`,
      );
    assert.ok(applyBlocks(doc, rendered) === doc, FIX);
  });

  it('has a row in the targets table for every target of the run', () => {
    const verdicts = rendered.targets
      .split('\n')
      .slice(2)
      .map((line) => line.split('|').at(-2)!.trim())
      .filter((v) => /^(met|MISSED|n\/a)/.test(v));
    assert.equal(verdicts.length, results.targets.length);
    const met = results.targets.filter((t) => t.met).length;
    assert.equal(verdicts.filter((v) => v === 'met').length, met);
    assert.match(rendered.summary, new RegExp(`^\\*\\*${met} of the ${results.targets.length} targets met`));
  });

  it('fails a figure edited by hand', () => {
    // On the page as rendered (not the file on disk), so this holds whatever state the file is in.
    const page = applyBlocks(doc, rendered);
    const block = readBlocks(page).get('targets')!;
    const figure = /\d+\.\d\dx/.exec(block)![0];
    const edited = page.replace(block, block.replace(figure, figure === '9.99x' ? '9.98x' : '9.99x'));
    assert.notEqual(readBlocks(edited).get('targets'), framed(rendered.targets));
    assert.ok(applyBlocks(edited, rendered) === page, 'rendering again restores the page');
  });

  it('renders deterministically, and refuses a page without a block’s markers', () => {
    assert.deepEqual(renderBlocks(readResults(RESULTS)), rendered);
    const without = doc.replace('<!-- generated:writers -->', '').replace('<!-- /generated:writers -->', '');
    assert.throws(() => applyBlocks(without, rendered), /no markers for <!-- generated:writers -->/);
    assert.throws(() => readBlocks('<!-- generated:run -->\n'), /never closed/);
  });
});
