/**
 * Reading shell commands for the policy (src/core/shell/command-reader.ts): the words a shell makes of a
 * command, the program it runs behind wrappers and `sh -c`, what cannot be read, and how a policy
 * pattern matches. Table-driven: each row is a command and what it must read as.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalCommand,
  commandMatch,
  commandMatches,
  commandWords,
  readCommand,
} from '../../../../src/core/shell/command-reader';
import { shellWords } from '../../../../src/core/shell/lexer';
import { deniedBy, policyGatesFor } from '../../../../src/core/rules/gate-rules';
import type { Policy } from '../../../../src/core/model/policy';

const gatesOf = (p: Policy, c: string) => policyGatesFor(p, c).map((r) => r.gate);

describe('shellWords: the shell’s quoting rules, nothing interpreted', () => {
  const cases: [string, string[] | undefined][] = [
    ['git push origin main', ['git', 'push', 'origin', 'main']],
    ['  git   push\t-f ', ['git', 'push', '-f']],
    [`git commit -m 'a b  c'`, ['git', 'commit', '-m', 'a b  c']],
    [`echo 'it''s'`, ['echo', 'its']],
    [`echo "a \\"b\\" \\\\ c"`, ['echo', 'a "b" \\ c']],
    [`echo "back\\slash kept"`, ['echo', 'back\\slash kept']],
    [`echo "'single' inside"`, ['echo', "'single' inside"]],
    [`g\\it pu\\sh`, ['git', 'push']],
    ['a\\ b', ['a b']],
    ['a\\\nb', ['ab']],
    [`echo '' ""`, ['echo', '', '']],
    [`echo 'multi\nline'`, ['echo', 'multi\nline']],
    ['env git push', ['env', 'git', 'push']],
    ['', []],
    // Not plain words.
    ['a && b', undefined],
    ['a; b', undefined],
    ['a\nb', undefined],
    ['a | b', undefined],
    ['a > f', undefined],
    ['a 2>&1', undefined],
    ['echo $HOME', undefined],
    ['echo "$HOME"', undefined],
    ['echo `id`', undefined],
    ['echo "`id`"', undefined],
    ['echo $(id)', undefined],
    ['ls *.ts', undefined],
    ['ls file?', undefined],
    ['ls [ab]', undefined],
    ['echo {a,b}', undefined],
    ['(cd x)', undefined],
    ['echo ~/x', undefined],
    ['git log HEAD~1', undefined],
    ['git log HEAD^', undefined],
    ['echo x # comment', undefined],
    ['echo hi!', undefined],
    ['echo "hi!"', undefined],
    ['=ls -l', undefined],
    [`echo 'open`, undefined],
    [`echo "open`, undefined],
    ['echo trailing\\', undefined],
    ['echo a\rb', undefined],
    ['echo a\0b', undefined],
  ];
  for (const [command, words] of cases)
    it(JSON.stringify(command), () => assert.deepEqual(shellWords(command), words));
});

describe('commandWords: what a plain command runs', () => {
  const cases: [string, string[] | undefined][] = [
    // The program word is its name.
    ['/bin/rm -rf build', ['rm', '-rf', 'build']],
    ['./x/git push', ['git', 'push']],
    ['\\rm -rf build', ['rm', '-rf', 'build']],
    ["'/usr/bin/git' push", ['git', 'push']],
    ['/BIN/RM -rf build', ['rm', '-rf', 'build']],
    // Leading assignments.
    ['FOO=1 git push', ['git', 'push']],
    [`FOO='a b' BAR=2 git push`, ['git', 'push']],
    ['FOO=1', []],
    // env, with its options and assignments.
    ['env git push origin main', ['git', 'push', 'origin', 'main']],
    ['/usr/bin/env -i git push', ['git', 'push']],
    ['env - FOO=1 git push', ['git', 'push']],
    ['env -u HOME --unset=USER --unset LANG git push', ['git', 'push']],
    ['env -C /tmp --chdir=/ git push', ['git', 'push']],
    ['env -uHOME -- git push', ['git', 'push']],
    ['env ./weird=name git push', ['git', 'push']],
    ['env', ['env']],
    // command, exec, nice, timeout, and the others.
    ['command git push', ['git', 'push']],
    ['command -p git push', ['git', 'push']],
    ['command -v git', ['command', '-v', 'git']],
    ['command -V git', ['command', '-V', 'git']],
    ['exec git push', ['git', 'push']],
    ['exec -a name -c -l git push', ['git', 'push']],
    ['exec -cla name git push', ['git', 'push']],
    ['nice git push', ['git', 'push']],
    ['nice -n 5 git push', ['git', 'push']],
    ['nice -n5 git push', ['git', 'push']],
    ['nice -5 git push', ['git', 'push']],
    ['nice --10 git push', ['git', 'push']],
    ['nice --adjustment=5 git push', ['git', 'push']],
    ['timeout 10 git push', ['git', 'push']],
    ['timeout -s KILL -k 5 --preserve-status 1m git push', ['git', 'push']],
    ['timeout --signal=TERM --kill-after=5 --foreground -v 10 git push', ['git', 'push']],
    ['nohup git push', ['git', 'push']],
    ['sudo git push', ['git', 'push']],
    ['sudo -u deploy -E -n -- git push', ['git', 'push']],
    ['sudo --user=deploy --preserve-env FOO=1 git push', ['git', 'push']],
    ['time git push', ['git', 'push']],
    ['time -p git push', ['git', 'push']],
    ['stdbuf -oL -e 0 git push', ['git', 'push']],
    ['setsid -f git push', ['git', 'push']],
    ['ionice -c 3 -n7 git push', ['git', 'push']],
    ['builtin command git push', ['git', 'push']],
    ['busybox rm -rf build', ['rm', '-rf', 'build']],
    ['env nice -n 5 timeout 10 git push', ['git', 'push']],
    ['FOO=1 env BAR=2 command nice -n 1 exec nohup sudo time git push', ['git', 'push']],
    // sh -c and eval are read inside.
    [`sh -c 'git push origin main'`, ['git', 'push', 'origin', 'main']],
    [`bash -c "git push"`, ['git', 'push']],
    [`/bin/dash -ec 'git push'`, ['git', 'push']],
    [`zsh -c 'git push' zsh arg`, ['git', 'push']],
    [`ksh -x -o pipefail -c -- 'git push'`, ['git', 'push']],
    [`bash -lc 'env git push'`, ['git', 'push']],
    [`bash -c "sh -c 'git push'"`, ['git', 'push']],
    ['eval git push', ['git', 'push']],
    [`eval 'git push'`, ['git', 'push']],
    [`builtin eval "rm -rf build"`, ['rm', '-rf', 'build']],
    ['bash script.sh', ['bash', 'script.sh']],
    ['set -euo pipefail', ['set', '-euo', 'pipefail']],
    ['', []],
    // Lists, pipes and redirections are not one plain command.
    ['git push && echo ok', undefined],
    ['git push > log', undefined],
    ['git push;', undefined],
    [`sh -c 'git push; echo ok'`, undefined],
    // What cannot be read.
    ['git push $REMOTE', undefined],
    ['PATH=./bin git push', undefined],
    ['env BASH_ENV=./x bash -c true', undefined],
    ['LD_PRELOAD=./x.so git push', undefined],
    ['env -S "git push"', undefined],
    ['env --bogus git push', undefined],
    ['timeout --bogus 10 git push', undefined],
    ['sudo -s git push', undefined],
    ['sudo -i', undefined],
    ['sudo', undefined],
    ['bash', undefined],
    ['bash -s', undefined],
    ['bash -i -c "git push"', undefined],
    ['bash --rcfile x -c "git push"', undefined],
    [`bash -c 'git push $1' x`, undefined],
    ['bash -c', undefined],
    [`fish -c 'git push'`, undefined],
    ['xargs git push', undefined],
    ['find . -name x -exec rm {} ;', undefined],
    [`find . -name x -exec rm '{}' ';'`, undefined],
    ['if git push', undefined],
    ['alias ls=rm', undefined],
    ['trap "rm -rf build" EXIT', undefined],
    ['export FOO=1', undefined],
    ['declare -i x', undefined],
    ['hash -p /bin/rm ls', undefined],
    ['set -k', undefined],
    ['printf -v x hi', undefined],
    ['repeat 1 git push', undefined],
    [`eval 'git push $x'`, undefined],
    [`${'eval '.repeat(5)}git push`, ['git', 'push']],
    [`${'eval '.repeat(12)}git push`, undefined], // deeper than any real command
  ];
  for (const [command, words] of cases)
    it(JSON.stringify(command), () => {
      assert.deepEqual(commandWords(command), words);
      assert.equal(canonicalCommand(command), words?.join(' '));
    });

  it('pieces of a list are read one by one; what cannot be read taints the whole', () => {
    const r = readCommand('cd app && npm test 2>&1 | tail -5');
    assert.equal(r.plain, false);
    assert.equal(r.unreadable, false);
    for (const f of ['cd app', 'npm test', 'tail -5']) assert.ok(r.forms.includes(f), f);
    assert.equal(readCommand('npm test && echo $HOME').unreadable, true);
    assert.equal(readCommand('npm test > $LOG').unreadable, true);
    assert.equal(readCommand('npm test >').unreadable, true);
    assert.equal(readCommand('echo x | sh').unreadable, true);
    assert.equal(readCommand('cat <<EOF\nrm -rf build\nEOF').unreadable, true);
  });
});

describe('commandMatches: a policy pattern over what a command runs', () => {
  // [pattern, command, match]
  const cases: [string, string, 'written' | 'unreadable' | undefined][] = [
    // The two attacks of the security finding.
    ['git push*', 'env git push origin main', 'written'],
    ['rm -rf *', '/bin/rm -rf build', 'written'],
    // Exact patterns over the raw string keep matching.
    ['git push origin main', 'git push origin main', 'written'],
    [`git commit -m "wip"`, `git commit -m "wip"`, 'written'],
    ['git push*', `git  'push'   origin`, 'written'],
    ['git push*', 'git status', undefined],
    ['git push*', 'echo git push', undefined],
    ['git push*', `echo 'git push'`, undefined],
    ['rm -rf *', 'rm -r build', undefined],
    // Wrappers, assignments, shells.
    ['git push*', 'FOO=1 command git push', 'written'],
    ['git push*', 'env nice -n 5 timeout 10 git push', 'written'],
    ['git push*', 'sudo -u deploy git push', 'written'],
    ['git push*', `sh -c 'git push'`, 'written'],
    ['git push*', `bash -c 'cd app && git push'`, 'written'],
    ['git push*', 'eval "git push --force"', 'written'],
    ['git push*', 'command -v git push', undefined],
    // A pattern naming a wrapper still sees it.
    ['sudo *', 'env sudo git push', 'written'],
    ['nice *', 'nice -n 5 git push', 'written'],
    ['bash *', `echo hi && bash -c 'ls'`, 'written'],
    // Lists and pipes: each piece.
    ['git push*', 'git push origin main && echo ok', 'written'],
    ['git push*', 'npm test; git push', 'written'],
    ['git push*', 'echo ok | git push', 'written'],
    ['git push*', 'git push > /dev/null 2>&1 &', 'written'],
    ['rm -rf *', 'npm test && npm run lint', undefined],
    ['rm -rf *', 'npm test 2>&1 | tail -5', undefined],
    ['rm -rf *', 'cd app && rm -rf build', 'written'],
    // What cannot be read matches every pattern.
    ['rm -rf *', 'echo $(rm -rf build)', 'unreadable'],
    ['rm -rf *', 'git log HEAD~5', 'unreadable'],
    ['git push*', '$GIT push', 'unreadable'],
    ['git push*', 'g=git; $g push', 'unreadable'],
    ['git push*', 'echo git push | sh', 'unreadable'],
    ['git push*', 'echo origin | xargs git push', 'unreadable'],
    ['git push*', `alias g=git\ng push`, 'unreadable'],
    ['git push*', '(git push)', 'unreadable'],
    ['git push*', 'PATH=./bin ls', 'unreadable'],
    ['anything at all', `sh -c 'git push $0'`, 'unreadable'],
  ];
  for (const [pattern, command, expected] of cases)
    it(`${JSON.stringify(pattern)} ~ ${JSON.stringify(command)}`, () => {
      assert.equal(commandMatch(pattern, command), expected);
      assert.equal(commandMatches(pattern, command), expected !== undefined);
    });
});

describe('the policy rules read commands (rules/gate-rules.ts)', () => {
  const POLICY: Policy = {
    v: 1,
    gatedActions: [
      { pattern: 'git push*', gate: 'prod' },
      { pattern: 'npm publish*', gate: 'release' },
    ],
    deniedActions: [{ pattern: 'rm -rf *', reason: 'never delete trees' }],
  };

  it('the attacks: env git push needs gate prod, /bin/rm -rf build is denied', () => {
    assert.deepEqual(gatesOf(POLICY, 'env git push origin main'), ['prod']);
    assert.deepEqual(deniedBy(POLICY, '/bin/rm -rf build'), {
      pattern: 'rm -rf *',
      reason: 'never delete trees',
    });
  });

  it('a list needs the gate its pieces need, not the first of the policy', () => {
    assert.deepEqual(gatesOf(POLICY, 'npm test && npm publish'), ['release']);
    assert.deepEqual(gatesOf(POLICY, 'git push && npm publish'), ['prod', 'release'], 'each piece’s gate');
    assert.deepEqual(gatesOf(POLICY, 'npm test && npm run lint'), []);
    assert.equal(deniedBy(POLICY, 'npm test && npm run lint'), undefined);
  });

  it('what cannot be read is gated and denied, and the reason says why', () => {
    assert.deepEqual(gatesOf(POLICY, 'echo $(npm publish)'), ['prod', 'release'], 'every gate');
    const d = deniedBy(POLICY, 'ls *.tmp');
    assert.equal(d?.pattern, 'rm -rf *');
    assert.match(d!.reason!, /cannot read this command as plain words/);
    assert.equal(deniedBy({ v: 1 }, 'ls *.tmp'), undefined, 'no pattern, nothing to match');
  });
});
