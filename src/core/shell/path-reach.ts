/**
 * Where a command the allow list allows may reach: the workspace, and nothing else of the disk.
 *
 * Why: `grep -r -a -H "" ..` is a read, and `grep *` allows it, yet from a workspace in the home
 * folder it prints the user's LoopX config folder (the contract and snapshot keys, the person's
 * encrypted private keys). So a command allowed by a pattern (never one a contract lists) must not
 * name a path that leads outside the workspace, into one of its `forbidden` folders
 * (`.loopx/local/`), into or above one of its `secret` folders (the config folder, wherever it is),
 * nor run from a folder outside the workspace (its recursive reads read the folder it runs in).
 *
 * Which words are paths is not guessed per program: every argument is one, and so are the value
 * of `--opt=value` (or `key=value`) and what follows a short option's letter (`-f/etc/x`); a
 * word that is not a path resolves inside the folder the command runs in and costs nothing. Where
 * a path leads is where the disk takes it: `..` and symbolic links of what exists are followed
 * (a link in the workspace to `..` leads outside), from the nearest existing folder on its way.
 * A word starting with `~` is refused: some programs read it as the home folder.
 *
 * No Node built-in is imported: the webview bundles shell/ (for `shellQuote`), so the caller
 * gives the path functions and the disk (`node:path`, `fs.realpathSync`).
 */
import type * as NodePath from 'node:path';

/** Where a command runs and what it may reach; relative paths resolve against `cwd`. */
export interface Reach {
  /** The workspace folder: every path must lead inside it. */
  root: string;
  /** The folder the command runs in. */
  cwd: string;
  /** Folders in the workspace no path may lead into (`<root>/.loopx/local/`). */
  forbidden: readonly string[];
  /** Folders no path may lead into nor hold (the user's LoopX config folder). */
  secret: readonly string[];
  path: Pick<
    typeof NodePath,
    'resolve' | 'relative' | 'isAbsolute' | 'dirname' | 'basename' | 'join' | 'sep'
  >;
  /** The real path of something that exists (`fs.realpathSync`); throws when nothing does. */
  realpath: (p: string) => string;
}

/** The parts of a command's arguments that may name a path. */
export function pathCandidates(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of args) {
    out.push(w);
    const eq = w.indexOf('=');
    if (eq > 0) out.push(w.slice(eq + 1));
    if (/^-[^-]./.test(w)) {
      // `-fFILE` and, in a cluster, `-rf../x`: after the first letter, and from where a path starts.
      out.push(w.slice(2));
      const start = w.slice(2).search(/[/.~]/);
      if (start > 0) out.push(w.slice(2 + start));
    }
  }
  return [...new Set(out)];
}

/** `p` with its longest existing ancestor replaced by that ancestor's real path. */
function realOf(p: string, where: Reach): string {
  const { path } = where;
  const rest: string[] = [];
  for (let cur = p; ;) {
    try {
      const real = where.realpath(cur);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return p;
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

/** Whether `p` is `dir` or inside it (both absolute). */
function inside(p: string, dir: string, where: Reach): boolean {
  const rel = where.path.relative(dir, p);
  return (
    rel === '' || (rel !== '..' && !rel.startsWith(`..${where.path.sep}`) && !where.path.isAbsolute(rel))
  );
}
/** The same, case-folded: a case-insensitive disk reaches a folder by any case. */
const insideAnyCase = (p: string, dir: string, where: Reach) =>
  inside(p.toLowerCase(), dir.toLowerCase(), where);

/**
 * Why a command with these arguments, run in `where.cwd`, may read beyond the workspace, or
 * undefined when every path it names (and the folder it runs in) stays inside.
 */
export function reachProblem(args: readonly string[], where: Reach): string | undefined {
  const { path } = where;
  const root = realOf(path.resolve(where.root), where);
  const walls = where.forbidden.map((f) => path.resolve(f));
  const secrets = where.secret.map((f) => path.resolve(f));
  for (const f of [...walls, ...secrets]) {
    const real = realOf(f, where);
    if (real !== f) (secrets.includes(f) ? secrets : walls).push(real);
  }
  const problem = (real: string, what: string): string | undefined => {
    if (!inside(real, root, where)) return `${what} leads outside the workspace`;
    if ([...walls, ...secrets].some((f) => insideAnyCase(real, f, where)))
      return `${what} leads into a folder of LoopX's own`;
    if (secrets.some((f) => insideAnyCase(f, real, where))) return `${what} holds the LoopX config folder`;
    return undefined;
  };
  const cwd = path.resolve(where.root, where.cwd);
  const atCwd = problem(realOf(cwd, where), 'the folder it runs in');
  if (atCwd) return atCwd;
  for (const c of pathCandidates(args)) {
    if (c.startsWith('~')) return `${JSON.stringify(c)} may name the home folder`;
    const found = problem(realOf(path.resolve(cwd, c), where), JSON.stringify(c));
    if (found) return found;
  }
  return undefined;
}
