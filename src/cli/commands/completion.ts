/**
 * `loopx completion bash|zsh|fish`: a completion script generated from the program itself
 * (every command, alias and option `buildProgram` defines), so it is never out of date. Goal ids
 * after `--goal-id` come from `loopx project_prompt list --json`, run only when completing one.
 */
import type { Command, Option } from 'commander';
import { Argument } from 'commander';
import type { Act } from '../define';
import { example } from '../define';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface OptionSpec {
  /** `--goal-id`, and `-h` style short forms. */
  long?: string;
  short?: string;
  description: string;
  takesValue: boolean;
  choices?: string[];
}
interface CommandSpec {
  /** `todo add`; the program itself is ''. */
  path: string;
  /** Canonical names of the commands under it, with their aliases and descriptions. */
  subs: { name: string; aliases: string[]; description: string }[];
  options: OptionSpec[];
  /** The values its first argument may take, when it has a fixed list. */
  args: string[];
}

const optionSpec = (o: Option): OptionSpec => ({
  ...(o.long ? { long: o.long } : {}),
  ...(o.short ? { short: o.short } : {}),
  description: o.description,
  takesValue: o.required || o.optional,
  ...(o.argChoices ? { choices: [...o.argChoices] } : {}),
});

/** Every command of the program, depth first; the program's own options apply everywhere. */
export function commandSpecs(program: Command): CommandSpec[] {
  const globals = [
    ...program.options.map(optionSpec),
    { long: '--help', short: '-h', description: 'help', takesValue: false },
  ];
  const out: CommandSpec[] = [];
  const walk = (cmd: Command, path: string) => {
    const visible = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    // A command's fixed-choice argument (`completion <shell>`) is offered where a subcommand would be.
    const choices = cmd.registeredArguments[0]?.argChoices ?? [];
    out.push({
      path,
      subs: visible.map((c) => ({ name: c.name(), aliases: c.aliases(), description: c.description() })),
      args: [...choices],
      options: path === '' ? globals : [...cmd.options.map(optionSpec), ...globals],
    });
    for (const c of visible) walk(c, path ? `${path} ${c.name()}` : c.name());
  };
  walk(program, '');
  return out;
}

/** A word for a single-quoted shell string ('…'). */
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const flags = (o: OptionSpec) => [o.long, o.short].filter((f): f is string => !!f);

/**
 * The POSIX-shell helpers bash and zsh share: the command path a word leads to, the options
 * that take a value, and the words to offer at a path.
 */
function shHelpers(specs: CommandSpec[]): string {
  const sub: string[] = [];
  const valued: string[] = [];
  const words: string[] = [];
  const choices: string[] = [];
  for (const s of specs) {
    for (const c of s.subs) {
      const to = s.path ? `${s.path} ${c.name}` : c.name;
      sub.push(
        `    ${[c.name, ...c.aliases].map((n) => sq(`${s.path}|${n}`)).join('|')}) printf '%s\\n' ${sq(to)} ;;`,
      );
    }
    const vf = s.options.filter((o) => o.takesValue).flatMap(flags);
    if (vf.length) valued.push(`    ${vf.map((f) => sq(`${s.path}|${f}`)).join('|')}) return 0 ;;`);
    const subs = [...s.subs.map((c) => c.name), ...s.args];
    words.push(
      `    ${sq(s.path)}) subs=${sq(subs.join(' '))}; opts=${sq(s.options.flatMap(flags).join(' '))} ;;`,
    );
    for (const o of s.options.filter((x) => x.choices))
      choices.push(
        `    ${flags(o)
          .map((f) => sq(`${s.path}|${f}`))
          .join('|')}) printf '%s\\n' ${sq(o.choices!.join(' '))} ;;`,
      );
  }
  return [
    '# The command path after word $2 at path $1 (fails when $2 is no command there).',
    '_loopx_sub() {',
    '  case "$1|$2" in',
    ...sub,
    '    *) return 1 ;;',
    '  esac',
    '}',
    '# Whether option $2 at path $1 takes a value (the next word).',
    '_loopx_valued() {',
    '  case "$1|$2" in',
    ...valued,
    '  esac',
    '  return 1',
    '}',
    '# The commands ($subs) and options ($opts) at path $1.',
    '_loopx_words() {',
    '  subs=""; opts=""',
    '  case "$1" in',
    ...words,
    '  esac',
    '}',
    '# The values option $2 at path $1 accepts, when it has a fixed list.',
    '_loopx_choices() {',
    '  case "$1|$2" in',
    ...choices,
    '    *) return 1 ;;',
    '  esac',
    '}',
    '# Goal ids, asked of loopx only when one is being completed.',
    '_loopx_goal_ids() {',
    `  command loopx project_prompt list --json 2>/dev/null | sed -n 's/^    "id": "\\([^"]*\\)",*$/\\1/p'`,
    '}',
    '# The path the words before the cursor lead to ("" at the top; "--" after a literal --).',
    '_loopx_path() {',
    '  _lp=""; _skip=0',
    '  for _w in "$@"; do',
    '    if [ "$_skip" = 1 ]; then _skip=0; continue; fi',
    '    case "$_w" in',
    '      --) _lp="--"; return 0 ;;',
    '      --*=*) continue ;;',
    '      -*) _loopx_valued "$_lp" "$_w" && _skip=1; continue ;;',
    '    esac',
    '    _next=$(_loopx_sub "$_lp" "$_w") && _lp=$_next',
    '  done',
    '}',
  ].join('\n');
}

function bashScript(specs: CommandSpec[], version: string): string {
  return `# bash completion for loopx ${version}, generated by \`loopx completion bash\`.
# Load it in this shell:  source <(loopx completion bash)
# Or for every shell:     loopx completion bash > ~/.local/share/bash-completion/completions/loopx
${shHelpers(specs)}
_loopx() {
  local cur prev subs opts _lp _skip _w _next
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev=""
  if [ "$COMP_CWORD" -gt 1 ]; then prev="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  _loopx_path "\${COMP_WORDS[@]:1:COMP_CWORD-1}"
  COMPREPLY=()
  # After \`--\` comes a shell command (loopx exec): the shell's own completion applies.
  if [ "$_lp" = "--" ]; then return 0; fi
  if [ -n "$prev" ] && _loopx_valued "$_lp" "$prev"; then
    local values
    if values=$(_loopx_choices "$_lp" "$prev"); then
      COMPREPLY=( $(compgen -W "$values" -- "$cur") )
    elif [ "$prev" = "--goal-id" ]; then
      COMPREPLY=( $(compgen -W "$(_loopx_goal_ids)" -- "$cur") )
    elif [ "$prev" = "--output" ] || [ "$prev" = "--workspace" ]; then
      COMPREPLY=( $(compgen -f -- "$cur") )
    fi
    return 0
  fi
  _loopx_words "$_lp"
  case "$cur" in
    -*) COMPREPLY=( $(compgen -W "$opts" -- "$cur") ) ;;
    *) COMPREPLY=( $(compgen -W "\${subs:-$opts}" -- "$cur") ) ;;
  esac
}
complete -F _loopx loopx
`;
}

function zshScript(specs: CommandSpec[], version: string): string {
  return `#compdef loopx
# zsh completion for loopx ${version}, generated by \`loopx completion zsh\`.
# Install:  loopx completion zsh > "\${fpath[1]}/_loopx"   (then start a new shell)
# Or load it in this shell:  source <(loopx completion zsh)
${shHelpers(specs)}
_loopx() {
  local cur prev subs opts _lp _skip _w _next values
  cur=\${words[CURRENT]}
  prev=\${words[CURRENT-1]}
  _loopx_path "\${(@)words[2,CURRENT-1]}"
  if [[ $_lp == "--" ]]; then _normal; return; fi
  if (( CURRENT > 2 )) && _loopx_valued "$_lp" "$prev"; then
    if values=$(_loopx_choices "$_lp" "$prev"); then
      compadd -- \${=values}
    elif [[ $prev == --goal-id ]]; then
      compadd -- \${(f)"$(_loopx_goal_ids)"}
    elif [[ $prev == --output || $prev == --workspace ]]; then
      _files
    fi
    return
  fi
  _loopx_words "$_lp"
  if [[ $cur == -* || -z $subs ]]; then compadd -- \${=opts}; else compadd -- \${=subs}; fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _loopx "$@"; else compdef _loopx loopx; fi
`;
}

/** Fish: the same tables as fish lists, and one \`complete\` line per command and option. */
function fishScript(specs: CommandSpec[], version: string): string {
  const fq = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const keys: string[] = [];
  const vals: string[] = [];
  const valued: string[] = [];
  const lines: string[] = [];
  for (const s of specs) {
    for (const c of s.subs)
      for (const n of [c.name, ...c.aliases]) {
        keys.push(fq(`${s.path}|${n}`));
        vals.push(fq(s.path ? `${s.path} ${c.name}` : c.name));
      }
    const at = `-n ${fq(`__loopx_at ${fq(s.path)}`)}`;
    for (const c of s.subs) lines.push(`complete -c loopx -f ${at} -a ${fq(c.name)} -d ${fq(c.description)}`);
    if (s.args.length) lines.push(`complete -c loopx -f ${at} -a ${fq(s.args.join(' '))}`);
    for (const o of s.options) {
      if (o.takesValue) valued.push(...flags(o).map((f) => fq(`${s.path}|${f}`)));
      const names = [o.long ? `-l ${o.long.slice(2)}` : '', o.short ? `-s ${o.short.slice(1)}` : '']
        .filter(Boolean)
        .join(' ');
      const value = !o.takesValue
        ? ''
        : o.choices
          ? ` -x -a ${fq(o.choices.join(' '))}`
          : o.long === '--goal-id'
            ? ` -x -a ${fq('(__loopx_goal_ids)')}`
            : o.long === '--output' || o.long === '--workspace'
              ? ' -r -F'
              : ' -x';
      lines.push(`complete -c loopx ${at} ${names}${value} -d ${fq(o.description)}`);
    }
  }
  return `# fish completion for loopx ${version}, generated by \`loopx completion fish\`.
# Install:  loopx completion fish > ~/.config/fish/completions/loopx.fish
set -g __loopx_sub_keys ${keys.join(' ')}
set -g __loopx_sub_vals ${vals.join(' ')}
set -g __loopx_valued ${valued.join(' ')}
function __loopx_path
    set -l p ''
    set -l skip 0
    for w in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case '--'
                printf '%s\\n' '--'
                return
            case '--*=*'
                continue
            case '-*'
                if contains -- "$p|$w" $__loopx_valued
                    set skip 1
                end
                continue
        end
        set -l i (contains -i -- "$p|$w" $__loopx_sub_keys)
        and set p $__loopx_sub_vals[$i]
    end
    printf '%s\\n' "$p"
end
function __loopx_at
    set -l p (__loopx_path)
    test "$p" = "$argv[1]"
end
function __loopx_goal_ids
    command loopx project_prompt list --json 2>/dev/null | string match -r -g '^    "id": "([^"]*)",?$'
end
complete -c loopx -e
${lines.join('\n')}
`;
}

export function completionScript(program: Command, shell: Shell): string {
  const specs = commandSpecs(program);
  const version = program.version() ?? '';
  return shell === 'bash'
    ? bashScript(specs, version)
    : shell === 'zsh'
      ? zshScript(specs, version)
      : fishScript(specs, version);
}

export function registerCompletionCommand(program: Command, act: Act) {
  example(
    program
      .command('completion')
      .description('print a shell completion script for loopx (commands, options, goal ids)')
      .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
      .action(
        act((ctx, shell: Shell) => {
          ctx.io.stdout(completionScript(program, shell));
        }),
      ),
    'source <(loopx completion bash)',
    'loopx completion zsh > "${fpath[1]}/_loopx"',
    'loopx completion fish > ~/.config/fish/completions/loopx.fish',
  );
}
