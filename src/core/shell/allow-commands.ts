/**
 * The policy's `allowCommands`: shell commands the PreToolUse hook allows with no contract, so an
 * agent can read the code (`git diff`, `ls`, `rg`) under hooks that otherwise run only what a
 * contract lists.
 *
 * Matched on words, never on a raw prefix: a pattern `git diff *` is the words `git`, `diff` and
 * then anything, and a command matches only when it is one plain command whose words, read by the
 * shell's quoting rules (shell/lexer.ts), fit it. A command with an operator, a redirection, an
 * expansion or a substitution is never plain, so `git diff; rm -rf .` or `cat $(mktemp)` matches no
 * pattern, and `/tmp/x/git` is not `git`. Words in `except` (globs) refuse a match anywhere after
 * the program: `find *` with `-exec` is not a read.
 *
 * A denied or gated command of the policy is never allowed by a pattern: those rules come first.
 * Nor is a command that names a path outside the workspace, or runs outside it
 * (shell/path-reach.ts), nor one a person would read as another (a lookalike letter:
 * model/text-rules.ts). The disk is read only through the caller's `Reach`.
 */
import type { AllowRule, Policy } from '../model';
import { commandTextProblem, confusableProblem, DEFAULT_ALLOW_COMMANDS, quote, usageError } from '../model';
import { commandMatches } from './command-reader';
import { shellWords } from './lexer';
import type { Reach } from './path-reach';
import { reachProblem } from './path-reach';
import { matchesGlob } from './pattern';

/** The rules in force: the policy's, or the default list when it names none. */
export function allowRulesOf(policy: Policy): AllowRule[] {
  return policy.allowCommands ?? DEFAULT_ALLOW_COMMANDS;
}

const patternOf = (r: AllowRule) => (typeof r === 'string' ? r : r.pattern);
const exceptOf = (r: AllowRule) => (typeof r === 'string' ? [] : (r.except ?? []));

/** A pattern's words: split on spaces; `*` alone is any number of words (none included). */
export function patternWords(pattern: string): string[] {
  return pattern.trim().split(/\s+/).filter(Boolean);
}

/** Why a pattern cannot be used, or undefined. Checked when a person adds one. */
export function allowPatternProblem(pattern: string): string | undefined {
  const words = patternWords(pattern);
  if (words.length === 0) return 'the pattern is empty';
  const text = commandTextProblem(pattern);
  if (text) return `the pattern ${text}`;
  const program = words[0]!;
  if (program.includes('*'))
    return `the program word ${JSON.stringify(program)} must be a plain name, not a glob`;
  if (program.includes('/'))
    return `the program word ${JSON.stringify(program)} must be a name found on PATH, not a path (a path can name a file the agent wrote)`;
  const lexed = shellWords(program);
  if (lexed?.length !== 1 || lexed[0] !== program)
    return `the program word ${JSON.stringify(program)} must be a plain word`;
  return undefined;
}

/**
 * Whether `words` fit `pattern` (`*` alone: any number of words). Row by row from the pattern's
 * end, `after[j]` says whether the rest of the pattern fits `words[j..]`: linear in the words for
 * each pattern word, where trying every split recursively took minutes on a long command.
 */
function fits(pattern: readonly string[], words: readonly string[]): boolean {
  let after: boolean[] = words.map(() => false).concat(true);
  for (let i = pattern.length - 1; i >= 0; i--) {
    const p = pattern[i]!;
    const here: boolean[] = new Array<boolean>(words.length + 1).fill(false);
    for (let j = words.length; j >= 0; j--) {
      const more = j < words.length;
      here[j] =
        p === '*' ? after[j]! || (more && here[j + 1]!) : more && after[j + 1]! && matchesGlob(p, words[j]!);
    }
    after = here;
  }
  return after[0]!;
}

/** Whether one rule allows the command's words. */
function ruleAllows(rule: AllowRule, words: readonly string[]): boolean {
  const pattern = patternWords(patternOf(rule));
  // The program first: most rules name another, and only a usable pattern may allow anything.
  if (pattern[0] !== words[0] || allowPatternProblem(patternOf(rule)) || !fits(pattern, words)) return false;
  const except = exceptOf(rule);
  return !words.slice(1).some((w) => except.some((e) => matchesGlob(e, w)));
}

/**
 * The pattern that allows `command` without a contract, or undefined: the command is one plain
 * command that reads as it is written, no denied or gated rule of the policy applies to it, a rule
 * of `allowCommands` fits its words, and it reaches nothing beyond the workspace (`where`).
 */
export function allowedCommand(policy: Policy, command: string, where: Reach): string | undefined {
  const words = shellWords(command.trim());
  if (!words || words.length === 0 || commandTextProblem(command)) return undefined;
  const ruled = [...(policy.deniedActions ?? []), ...(policy.gatedActions ?? [])];
  if (ruled.some((r) => commandMatches(r.pattern, command))) return undefined;
  const rule = allowRulesOf(policy).find((r) => ruleAllows(r, words));
  if (rule === undefined || reachProblem(words.slice(1), where)) return undefined;
  return patternOf(rule);
}

/**
 * `policy` with `pattern` added to its allow rules (the defaults written out first when it names
 * none, so adding one keeps them). Refuses a pattern that could allow nothing or too much.
 */
export function withAllowedCommand(policy: Policy, pattern: string): { policy: Policy; added: boolean } {
  // The text as given: splitting into words would drop a no-break space a person reads as one.
  const lookalike = confusableProblem(pattern);
  if (lookalike)
    throw usageError(`cannot allow ${quote(pattern)}: the pattern ${lookalike}`, {
      reason: 'confusable_text',
    });
  const clean = patternWords(pattern).join(' ');
  const problem = allowPatternProblem(clean);
  if (problem) throw usageError(`cannot allow ${quote(pattern)}: ${problem}`, { reason: 'bad_pattern' });
  const rules = allowRulesOf(policy);
  if (rules.some((r) => patternOf(r) === clean && exceptOf(r).length === 0)) return { policy, added: false };
  return { policy: { ...policy, allowCommands: [...rules, clean] }, added: true };
}
