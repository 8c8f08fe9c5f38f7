/**
 * The policy's allowCommands (shell/allow-commands.ts) and its two neighbours in the policy: the
 * enforcement mode, and how an unsigned edit of either applies (trust/policy-signature.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  allowedCommand as allowedIn,
  allowPatternProblem,
  allowRulesOf,
} from '../../../../src/core/shell/allow-commands';
import type { Reach } from '../../../../src/core/shell/path-reach';
import { DEFAULT_ALLOW_COMMANDS, DEFAULT_POLICY } from '../../../../src/core/model/policy';
import type { Policy } from '../../../../src/core/model/policy';
import { tighten } from '../../../../src/core/trust/policy-signature';

const policy = (p: Partial<Policy> = {}): Policy => ({ ...DEFAULT_POLICY, ...p });

/** A workspace /ws on a disk with no links (shell/path-reach.ts is tested on a real one). */
const WS: Reach = {
  root: '/ws',
  cwd: '/ws',
  forbidden: ['/ws/.loopx/local'],
  secret: ['/home/u/.config/loopx'],
  path: path.posix,
  realpath: (p) => p,
};
const allowedCommand = (p: Policy, command: string) => allowedIn(p, command, WS);

describe('allowCommands: read-only commands by their words', () => {
  it('allows the defaults init writes, with any further words where the pattern says `*`', () => {
    const p = policy();
    for (const [command, pattern] of [
      ['git status', 'git status *'],
      ['git status --short', 'git status *'],
      ['git diff HEAD -- src/a.ts', 'git diff *'],
      ["git log --oneline -5 --format='%h %s'", 'git log *'],
      ['ls', 'ls *'],
      ['ls -la src', 'ls *'],
      ['cat README.md', 'cat *'],
      ["rg -n 'foo.*bar' src", 'rg *'],
      ["grep -rn 'TODO' src", 'grep *'],
      ['find . -name "*.ts" -type f', 'find *'],
      ['pwd', 'pwd'],
      ['git branch --show-current', 'git branch --show-current'],
    ] as const)
      assert.equal(allowedCommand(p, command), pattern, command);
  });

  it('never matches a raw prefix: operators, redirections, expansions, substitutions and paths match nothing', () => {
    const p = policy();
    for (const command of [
      'git diff; rm -rf .',
      'git status && curl http://x',
      'ls | sh',
      'cat README.md > /tmp/x',
      'cat < /etc/passwd',
      'ls $(rm -rf ~)',
      'cat `id`',
      'ls $HOME',
      'cat *.ts',
      'ls ~',
      'FOO=1 git status',
      'env git status',
      '/tmp/evil/git status',
      './ls',
      'git  -C /other status',
      'git diffx',
      'lsblk',
      'git stash',
      'git push',
      '',
      '   ',
    ])
      assert.equal(allowedCommand(p, command), undefined, JSON.stringify(command));
  });

  it('refuses a match when a word of `except` appears after the program', () => {
    const p = policy();
    for (const command of [
      'find . -exec rm {} ;',
      "find . -name '*.o' -delete",
      'find . -execdir sh -c x ;',
      'find . -okdir rm ;',
      'find . -fprint /tmp/list',
      "rg --pre 'sh -c evil' x",
      'rg --pre=./run.sh x',
      'git diff --output=src/index.ts',
      'git log --output /tmp/x',
      'git show --ext-diff HEAD',
    ])
      assert.equal(allowedCommand(p, command), undefined, command);
    assert.equal(
      allowedCommand(p, "find . -name '*exec*'"),
      'find *',
      'a quoted word that only contains exec',
    );
  });

  it('a denied or gated command is never allowed by a pattern', () => {
    const p = policy({
      deniedActions: [{ pattern: 'cat *secret*' }],
      gatedActions: [{ pattern: 'git log *', gate: 'audit' }],
    });
    assert.equal(allowedCommand(p, 'cat config/secret.txt'), undefined);
    assert.equal(allowedCommand(p, 'git log -1'), undefined);
    assert.equal(allowedCommand(p, 'cat README.md'), 'cat *');
  });

  it('an empty list allows nothing; a policy without the field gets the defaults; a person adds their own', () => {
    assert.equal(allowedCommand(policy({ allowCommands: [] }), 'ls'), undefined);
    const { allowCommands: _drop, ...without } = DEFAULT_POLICY;
    assert.deepEqual(allowRulesOf(without as Policy), DEFAULT_ALLOW_COMMANDS);
    const own = policy({ allowCommands: ['npm run lint', 'npm test *'] });
    assert.equal(allowedCommand(own, 'npm run lint'), 'npm run lint');
    assert.equal(allowedCommand(own, 'npm run lint --fix'), undefined, 'no `*`: exactly these words');
    assert.equal(allowedCommand(own, 'npm test -- --grep x'), 'npm test *');
    assert.equal(allowedCommand(own, 'ls'), undefined, 'a list of its own replaces the defaults');
  });

  it('a pattern whose program is a path or a glob allows nothing, and says why when a person adds it', () => {
    assert.match(allowPatternProblem('/usr/bin/git status')!, /not a path/);
    assert.match(allowPatternProblem('g* status')!, /plain name, not a glob/);
    assert.match(allowPatternProblem('   ')!, /empty/);
    assert.equal(allowPatternProblem('npm run lint'), undefined);
    assert.equal(
      allowedCommand(policy({ allowCommands: ['/usr/bin/git *'] }), '/usr/bin/git status'),
      undefined,
    );
    assert.equal(allowedCommand(policy({ allowCommands: ['* *'] }), 'rm -rf /'), undefined);
  });
});

describe('an unsigned edit of allowCommands or enforcement', () => {
  const signed = policy();
  it('that removes a rule or goes back to enforce applies at once', () => {
    const fewer = tighten(signed, policy({ allowCommands: ['ls *'] }));
    assert.deepEqual(fewer.allowCommands, ['ls *']);
    const observing = policy({ enforcement: 'observe' });
    assert.equal(tighten(observing, policy({ enforcement: 'enforce' })).enforcement, 'enforce');
  });

  it('that adds a rule, changes one, or switches to observe waits for a signature', () => {
    const more = tighten(signed, policy({ allowCommands: [...DEFAULT_ALLOW_COMMANDS, 'rm *'] }));
    assert.deepEqual(more.allowCommands, DEFAULT_ALLOW_COMMANDS, 'the added rule has no effect');
    const loosened = tighten(signed, policy({ allowCommands: ['git status *', 'find *'] }));
    assert.deepEqual(loosened.allowCommands, ['git status *'], '`find *` without its except is a new rule');
    assert.equal(tighten(signed, policy({ enforcement: 'observe' })).enforcement, 'enforce');
    assert.equal(
      tighten(signed, policy({ prices: { 'claude-*': { inputPerMTok: 0, outputPerMTok: 0 } } })).prices,
      undefined,
      'a price edit (a cheaper model loosens a cost budget) waits too',
    );
  });
});

describe('allowCommands: the workspace only, read as written', () => {
  it('a command naming a path outside the workspace, or running outside it, is not allowed', () => {
    const p = policy();
    for (const command of [
      'grep -r -a -H "" ..',
      'rg -uuu -a "" /home/u',
      'find .. -type f',
      'cat /etc/passwd',
      'cat src/../../x',
      'ls .loopx/local',
      'grep -r --file=/home/u/.config/loopx/keys/k.json src',
      'grep -rf/home/u/x src',
      "cat '~/x'",
    ])
      assert.equal(allowedCommand(p, command), undefined, command);
    for (const cwd of ['/', '/home/u', '/ws/.loopx/local', '/wsx'])
      assert.equal(allowedIn(p, 'ls', { ...WS, cwd }), undefined, cwd);
    assert.equal(allowedIn(p, 'cat ../README.md', { ...WS, cwd: '/ws/src' }), 'cat *');
  });

  it('file -C (it writes a compiled magic file) is not allowed; file is', () => {
    const p = policy();
    for (const command of [
      'file -C -m X',
      'file -bC -m X',
      'file -Cm X',
      'file --compile -m X',
      'file --co -m X',
    ])
      assert.equal(allowedCommand(p, command), undefined, command);
    for (const command of ['file README.md', 'file -b --mime-type x', 'file -L -z x', 'file -m magic x'])
      assert.equal(allowedCommand(p, command), 'file *', command);
  });

  it('a command or an allow pattern with a lookalike letter allows nothing', () => {
    const p = policy();
    assert.equal(allowedCommand(p, 'cat d\u0435ploy.sh'), undefined);
    assert.equal(allowedCommand(p, '\u0441at README.md'), undefined);
    assert.equal(allowedCommand(p, 'cat README.md\u200b'), undefined);
    assert.equal(allowedCommand(policy({ allowCommands: ['\u0441at *'] }), '\u0441at README.md'), undefined);
    assert.match(allowPatternProblem('\u0441at *')!, /U\+0441 CYRILLIC SMALL LETTER ES at character 1/);
    assert.equal(
      allowedCommand(p, "grep -rn 'ошибка' src"),
      'grep *',
      'a word in one other script is plain text',
    );
  });
});
