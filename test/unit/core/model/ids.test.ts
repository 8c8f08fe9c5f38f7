/** Ids name folders and appear in shell commands: only safe slugs pass, and the refusal says why. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from 'fast-check';
import { checkId, newId, randomSuffix, goalIdFromTitle, ID_PATTERN } from '../../../../src/core/model/ids';
import { Id } from '../../../../src/core/model/goal-state';
import { LoopxError } from '../../../../src/core/model/errors';
import { HOSTILE_IDS } from '../../../helpers/store';

function refusal(value: unknown, what = 'todo id'): LoopxError {
  try {
    checkId(value, what);
  } catch (e) {
    assert.ok(e instanceof LoopxError);
    return e;
  }
  assert.fail(`${JSON.stringify(value)} was accepted`);
}

/** Characters a shell treats specially, or that split a word. */
const SHELL_SPECIAL = /[\s$`'"\\|&;<>(){}[\]*?!~#=%^,:/.@]/;

describe('checkId', () => {
  it('accepts plain slugs up to 64 characters', () => {
    for (const id of ['a', 'A', '7', 'goal-1', 'fix_the_bug', 'run-7k2f9x3a', 'a'.repeat(64), 'Z-_-_9']) {
      assert.equal(checkId(id, 'goal id'), id);
    }
  });

  for (const [value, what] of HOSTILE_IDS) {
    it(`refuses ${what}, naming the field`, () => {
      const err = refusal(value, 'gate id');
      assert.equal(err.kind, 'usage');
      assert.equal(err.details.field, 'gate id');
      assert.match(err.message, /^gate id /);
      assert.match(err.message, /ids are 1-64 letters, digits, '-' or '_', starting with a letter or digit/);
      assert.ok(err.message.length < 300, 'the message stays readable');
      assert.doesNotMatch(err.message, /[\u0000-\u001f]/, 'no raw control characters reach a terminal');
    });
  }

  it('says what is wrong: empty, too long (with the length), or which character', () => {
    assert.match(refusal('').message, /todo id is empty/);
    const long = refusal('x'.repeat(10_000)).message;
    assert.match(long, /too long/);
    assert.match(long, /10000 characters/);
    assert.match(refusal('a'.repeat(65)).message, /too long/);
    assert.match(refusal('../x').message, /"\." is not allowed there/);
    assert.match(refusal('a;b').message, /";" is not allowed there/);
    assert.match(refusal('-rf').message, /"-" is not allowed there/);
    assert.match(refusal('p\u0430yment').message, /"\u0430" is not allowed there/);
    assert.match(refusal('a\u001bb').message, /"\\u001b" is not allowed there/);
  });

  it('refuses values that are not strings', () => {
    for (const v of [undefined, null, 42, ['a'], { id: 'a' }]) {
      const err = refusal(v, 'run id');
      assert.match(err.message, /^run id must be a string, got /);
    }
  });

  it('agrees with the zod Id schema on any string', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 80 }),
          fc.stringMatching(/^[A-Za-z0-9_.\-/ ]{0,70}$/),
        ),
        (s) => {
          let accepted = true;
          try {
            checkId(s, 'x');
          } catch {
            accepted = false;
          }
          assert.equal(Id.safeParse(s).success, accepted, JSON.stringify(s));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('an accepted id is one shell word and one folder name directly under its parent', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 70 }), (s) => {
        if (!ID_PATTERN.test(s)) return;
        checkId(s, 'x');
        assert.doesNotMatch(s, SHELL_SPECIAL);
        assert.ok(!s.startsWith('-'), 'not an option');
        assert.equal(path.dirname(path.join('/root/goals', s)), '/root/goals');
      }),
      { numRuns: 2000 },
    );
  });
});

describe('generated ids', () => {
  it('newId has the prefix, a lowercase base32 suffix, and is a valid id', () => {
    const id = newId('run');
    assert.match(id, /^run-[0-9a-hjkmnp-tv-z]{8}$/);
    assert.equal(checkId(id, 'run id'), id);
    assert.match(newId('ev', 12), /^ev-[0-9a-z]{12}$/);
  });

  it('newId does not repeat (10,000 draws)', () => {
    const seen = new Set(Array.from({ length: 10_000 }, () => newId('t', 8)));
    assert.equal(seen.size, 10_000);
  });

  it('randomSuffix uses Crockford base32 without i, l, o, u and spreads over the alphabet', () => {
    const s = randomSuffix(4000);
    assert.equal(s.length, 4000);
    assert.doesNotMatch(s, /[^0-9a-z]|[ilou]/);
    assert.equal(new Set(s).size, 32);
  });

  it('goalIdFromTitle makes a readable slug with a random tail', () => {
    assert.match(goalIdFromTitle('Refactor Payment Module'), /^refactor-payment-module-[0-9a-z]{4}$/);
    assert.match(goalIdFromTitle('Café  Crème!'), /^cafe-creme-[0-9a-z]{4}$/);
    assert.match(goalIdFromTitle(''), /^goal-[0-9a-z]{4}$/);
    assert.match(goalIdFromTitle('!!! ???'), /^goal-[0-9a-z]{4}$/);
    assert.match(goalIdFromTitle('../../etc/passwd'), /^etc-passwd-[0-9a-z]{4}$/);
    assert.match(goalIdFromTitle('$(rm -rf /); echo pwned'), /^rm-rf-echo-pwned-[0-9a-z]{4}$/);
    assert.notEqual(goalIdFromTitle('same'), goalIdFromTitle('same'));
  });

  it('goalIdFromTitle always gives a valid id, whatever the title', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (title) => {
        const id = goalIdFromTitle(title);
        assert.equal(checkId(id, 'goal id'), id);
        assert.ok(id.length <= 45, `${id} is short`);
        assert.doesNotMatch(id, /--|^-/);
      }),
      { numRuns: 1000 },
    );
    assert.ok(goalIdFromTitle('word '.repeat(2000)).length <= 45);
  });
});
