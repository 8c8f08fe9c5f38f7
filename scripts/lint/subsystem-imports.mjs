// ESLint rule: code outside a core subsystem imports it only through its public surface, the
// folder's index.ts (or browser.ts, the part a browser may load). The webview, a browser, imports
// only the model and the views' browser surface. docs/ARCHITECTURE.md, "Subsystems".
import * as fs from 'node:fs';
import * as path from 'node:path';

const SURFACES = new Set(['index', 'browser']);

/** The subsystem a path is in (`store` for src/core/store/lock.ts), and the rest of its path. */
function subsystemOf(coreDir, file) {
  const rel = path.relative(coreDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const [name, ...rest] = rel.split(path.sep);
  if (rest.length === 0) return undefined; // src/core/index.ts itself
  return { name, rest: rest.join('/').replace(/\.[cm]?[jt]s$/, '') };
}

export const subsystemImports = {
  meta: {
    type: 'problem',
    docs: { description: 'import a core subsystem only through its index.ts (or browser.ts)' },
    schema: [],
    messages: {
      deep: "import the {{name}} subsystem through its surface '{{surface}}', not its file '{{file}}'",
      browser:
        "the webview runs in a browser: it may import only src/core/model and src/core/views/browser, not '{{spec}}'",
    },
  },
  create(context) {
    const file = context.filename ?? context.getFilename();
    const root = context.cwd ?? context.getCwd();
    const coreDir = path.join(root, 'src', 'core');
    const inWebview = !path.relative(path.join(root, 'webview'), file).startsWith('..');
    const from = subsystemOf(coreDir, file);
    function check(node, spec) {
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), spec);
      let to = subsystemOf(coreDir, target);
      if (!to) {
        // `../store` names the folder: its index.ts.
        const rel = path.relative(coreDir, target);
        if (
          !rel.startsWith('..') &&
          rel &&
          !rel.includes(path.sep) &&
          fs.existsSync(path.join(target, 'index.ts'))
        )
          to = { name: rel, rest: 'index' };
        else return;
      }
      if (inWebview) {
        if (!(to.name === 'model' && to.rest === 'index') && !(to.name === 'views' && to.rest === 'browser'))
          context.report({ node, messageId: 'browser', data: { spec } });
        return;
      }
      if (from && from.name === to.name) return;
      if (SURFACES.has(to.rest)) return;
      const surface = path
        .relative(path.dirname(file), path.join(coreDir, to.name))
        .split(path.sep)
        .join('/');
      context.report({
        node,
        messageId: 'deep',
        data: { name: to.name, surface: surface.startsWith('.') ? surface : `./${surface}`, file: spec },
      });
    }
    const source = (node) => check(node.source, node.source?.value);
    return {
      ImportDeclaration: source,
      ExportNamedDeclaration: (node) => node.source && source(node),
      ExportAllDeclaration: source,
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
    };
  },
};

export default { rules: { 'subsystem-imports': subsystemImports } };
