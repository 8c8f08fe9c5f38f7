/**
 * The one rule for text (model/text-rules.ts), its lookalike part: command text must read as what
 * the policy's patterns match, while plain text in any script stays allowed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { commandTextProblem, confusableProblem, textProblem } from '../../../../src/core/model/text-rules';

describe('lookalikes in command text', () => {
  it('names the character and its position', () => {
    assert.match(
      confusableProblem('sh d\u0435ploy.sh prod')!,
      /U\+0435 CYRILLIC SMALL LETTER IE at character 5, a Cyrillic letter in a word of Latin letters/,
    );
    assert.match(
      confusableProblem('git push --f\u03bfrce')!,
      /U\+03BF GREEK SMALL LETTER OMICRON at character 13/,
    );
    assert.match(
      confusableProblem('\ud835\udc1e\u0441ho x')!,
      /U\+1D41E at character 1, another form of "e"/,
    );
  });

  it('refuses mixed words, words of lookalikes beside Latin ones, compatibility forms and Latin lookalikes', () => {
    for (const s of [
      'sh d\u0435ploy.sh', // Cyrillic е inside a Latin word
      '\u0455\u04bb deploy.sh', // ѕһ: Cyrillic letters that read as `sh`
      'cat \u0441\u043e\u0440.txt', // сор: all lookalikes
      'sh \u0501\u0435\u0440\u04cf\u043e\u0443.sh prod', // ԁерӏоу: `deploy` in Cyrillic lookalikes
      'git \u0440ush', // р
      '\u0391\u0392 x', // Greek capitals
      '\u13da\u13bb x', // Cherokee
      'a\u0585b', // Armenian oh
      '\uff53\uff48 deploy.sh', // fullwidth
      '\ufb01le x', // the ligature fi
      'git push\u00a0--force', // a no-break space
      'sh scr\u0131pts/x.sh', // dotless i
      'sh \u1d05eploy.sh', // small capital D
    ])
      assert.ok(confusableProblem(s), JSON.stringify(s));
  });

  it('allows plain text in one script, and letters with their accents', () => {
    for (const s of [
      'sh deploy.sh prod',
      "git commit -m 'Исправлена ошибка в отчёте'",
      'cat отчёт.txt',
      'echo 東京タワー',
      'ls Ελλάδα',
      "git commit -m 'Διόρθωση και έλεγχος'",
      'cat café.md naïve.txt',
      'git log --author=José',
      'grep -rn ä src',
      'echo e\u0301', // a combining accent
    ])
      assert.equal(confusableProblem(s), undefined, s);
  });

  it('a Russian title is plain text: titles and reasons keep the rule without the lookalike part', () => {
    assert.equal(textProblem('Исправить ошибку в отчёте'), undefined);
    assert.equal(textProblem('сор'), undefined);
    assert.ok(confusableProblem('cat сор'));
  });

  it('command text: the one rule (line breaks and tabs allowed) and then lookalikes', () => {
    assert.equal(commandTextProblem('npm test &&\n\tnpm run lint'), undefined);
    assert.match(commandTextProblem('rm -rf /\u202etmp')!, /RIGHT-TO-LEFT OVERRIDE/);
    assert.match(commandTextProblem('\u0441at x')!, /CYRILLIC SMALL LETTER ES/);
  });
});
