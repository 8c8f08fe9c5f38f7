/** Which id a person meant (core/model/id-match.ts): exact, a unique prefix, ambiguous, or near. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { idChoices, matchId } from '../../../../src/core/model/id-match';

const IDS = ['refactor-payment-module-gs06', 'refactor-billing-ksmb', 'ship', 'shipping-2c4d'];

describe('matching an id a person typed', () => {
  it('a whole id is itself, even when it prefixes another', () => {
    assert.deepEqual(matchId('ship', IDS), { kind: 'exact', id: 'ship' });
  });
  it('a unique prefix of three characters or more stands for the id', () => {
    assert.deepEqual(matchId('refactor-payment-module', IDS), {
      kind: 'prefix',
      id: 'refactor-payment-module-gs06',
    });
    assert.deepEqual(matchId('shipp', IDS), { kind: 'prefix', id: 'shipping-2c4d' });
    assert.equal(matchId('sh', ['shipping-2c4d']).kind, 'none', 'two characters are not enough');
  });
  it('a prefix of several lists them all, sorted', () => {
    assert.deepEqual(matchId('refactor', IDS), {
      kind: 'ambiguous',
      ids: ['refactor-billing-ksmb', 'refactor-payment-module-gs06'],
    });
  });
  it('a typo is answered with the ids near it, against the id with or without its suffix', () => {
    assert.deepEqual(matchId('refactr-payment-modul', IDS), {
      kind: 'none',
      near: ['refactor-payment-module-gs06'],
    });
    assert.deepEqual(matchId('Refactor-Billing', IDS), { kind: 'none', near: ['refactor-billing-ksmb'] });
    assert.deepEqual(matchId('deploy', IDS), { kind: 'none', near: [] });
  });
  it('lists choices as a person reads them', () => {
    assert.equal(idChoices(['a']), 'a');
    assert.equal(idChoices(['a', 'b', 'c']), 'a, b or c');
    assert.equal(idChoices(['a', 'b', 'c', 'd', 'e', 'f', 'g']), 'a, b, c, d, e and 2 more');
  });
});
