/**
 * The Node a person needs is one number: package.json's engines.node. The README says it next to
 * the two commands, docs/DEVELOPMENT.md says the same, and `npm run setup` reads it from
 * package.json rather than knowing one of its own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/readme';

const read = (f: string) => fs.readFileSync(path.join(REPO, f), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

/** Every "Node X or later" and "Node X+" in `text` (the Node a person brings, not Node 24 from npm). */
const claims = (text: string) =>
  [...text.matchAll(/\bNode(?:\.js)? (\d+(?:\.\d+)*)(\+| or later)/g)].map((m) => `${m[1]}${m[2]}`);

describe('the required Node version', () => {
  const floor = /^>=(\d+(?:\.\d+){0,2})$/.exec(engines)?.[1];

  it('is package.json\'s engines.node, in the form ">=X.Y"', () => {
    assert.ok(floor, `engines.node is "${engines}"`);
  });

  it('is the one the README names beside its two commands, and docs/DEVELOPMENT.md too', () => {
    const readme = read('README.md');
    const top = readme.slice(0, readme.indexOf('\n## '));
    assert.deepEqual(claims(top), [`${floor} or later`], `README.md, before its first section:\n${top}`);
    assert.deepEqual(
      [...new Set([...claims(readme), ...claims(read('docs/DEVELOPMENT.md'))])],
      [`${floor} or later`],
    );
  });

  it('is read by setup from package.json, not written in the script', () => {
    const script = read('scripts/setup.sh');
    assert.match(script, /require\("\.\/package\.json"\)\.engines\.node/);
    assert.ok(!script.includes(floor!), `scripts/setup.sh names ${floor} itself`);
  });
});
