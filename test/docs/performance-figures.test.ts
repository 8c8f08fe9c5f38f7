/**
 * docs/PERFORMANCE.md quotes one benchmark run: docs/performance/results.json, the committed copy
 * of what `npm run bench` wrote, and the instruction counts docs/performance/instructions.json, the
 * committed copy of what `npm run bench:instructions` wrote (the page says what to run while there
 * is none). Its generated blocks, rendered here in memory from those files, must be exactly what
 * the page holds: a figure edited by hand, or a file replaced without `npm run bench:doc`, fails
 * with the block's name and the command that fixes it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import {
  BLOCKS,
  DOC,
  INSTRUCTIONS,
  RESULTS,
  applyBlocks,
  framed,
  readBlocks,
  readInstructions,
  readResults,
  renderBlocks,
} from '../../scripts/docs/performance-doc';

const FIX =
  'run npm run bench:doc (scripts/docs/performance-doc.ts renders it from docs/performance/results.json and instructions.json)';

describe('docs/PERFORMANCE.md', () => {
  const doc = fs.readFileSync(DOC, 'utf8');
  const results = readResults(RESULTS);
  const instructions = readInstructions(INSTRUCTIONS);
  const rendered = renderBlocks(results, instructions);

  it('cites a whole benchmark run with its context', () => {
    assert.equal(results.schema, 'loopx.bench/1');
    assert.match(results.started, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'the start, in UTC');
    assert.match(results.machine.node, /^v\d+\./, 'the Node version');
    assert.equal(results.machine.load.length, 3, 'the load average at the start');
    assert.ok(results.targets.length > 0, 'the targets');
    for (const t of results.targets) assert.ok(t.name && t.target && 'met' in t, JSON.stringify(t));
  });

  it('cites whole instruction counts, or says how to make them', () => {
    if (!instructions) {
      assert.equal(fs.existsSync(INSTRUCTIONS), false);
      assert.match(
        rendered.instructions,
        /^No instruction counts committed yet: run npm run bench:instructions/,
      );
      return;
    }
    assert.equal(instructions.schema, 'loopx.bench-instructions/1');
    assert.match(instructions.started, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'when, in UTC');
    assert.match(instructions.node, /^v\d+\./, 'the Node version');
    assert.ok(instructions.rows.length >= 2, 'the floor and at least one call');
    assert.match(instructions.rows[0]!.name, /^node -e 0\b/, 'the first row is the floor');
    assert.equal(instructions.rows[0]!.vsFloor, 1, 'the floor against itself');
    for (const r of instructions.rows)
      assert.ok(r.name && r.millions > 0 && r.vsFloor > 0, JSON.stringify(r));
    // The table: a head, its rule, a row for each call.
    assert.equal(
      rendered.instructions.split('\n').filter((l) => l.startsWith('|')).length,
      instructions.rows.length + 2,
    );
  });

  it('renders instruction counts as a dated table against the floor', () => {
    const counts = {
      schema: 'loopx.bench-instructions/1',
      node: 'v22.1.0',
      started: '2026-12-06T09:15:30.000Z',
      revision: { commit: '0123456789abcdef0123456789abcdef01234567', dirty: true },
      rows: [
        { name: 'node -e 0 (the floor)', millions: 86, vsFloor: 1 },
        { name: 'status --goal-id --json', millions: 1234, vsFloor: 14.35 },
      ],
    };
    const block = renderBlocks(results, counts).instructions;
    assert.match(block, /^.*2026-12-06 09:15 UTC.*Node v22\.1\.0.*`0123456789` with uncommitted changes/);
    assert.match(block, /\| call +\| instructions \| vs floor \|/);
    assert.match(block, /\| node -e 0 \(the floor\) +\| 86 M +\| 1\.00x +\|/);
    assert.match(block, /\| status --goal-id --json +\| 1,234 M +\| 14\.35x +\|/);
    assert.doesNotMatch(
      renderBlocks(results, { ...counts, revision: { ...counts.revision, dirty: false } }).instructions,
      /uncommitted/,
    );
    assert.throws(
      () => renderBlocks(results, { ...counts, schema: 'other/1' }),
      /expected loopx\.bench-instructions\/1/,
    );
  });

  it('has every block the renderer knows, each exactly as rendered from the committed files', () => {
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
    assert.deepEqual(renderBlocks(readResults(RESULTS), readInstructions(INSTRUCTIONS)), rendered);
    const without = doc.replace('<!-- generated:writers -->', '').replace('<!-- /generated:writers -->', '');
    assert.throws(() => applyBlocks(without, rendered), /no markers for <!-- generated:writers -->/);
    assert.throws(() => readBlocks('<!-- generated:run -->\n'), /never closed/);
  });
});
