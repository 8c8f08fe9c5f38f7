/**
 * The folder tree is the architecture (docs/ARCHITECTURE.md): each core subsystem is a folder whose
 * index.ts is its public surface, code outside a subsystem imports it only through that surface
 * (the ESLint rule scripts/lint/subsystem-imports.mjs, run here on code written to break it; `npm
 * run lint` holds the source to it), and nothing registers itself on import.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const REPO = path.resolve(__dirname, '..', '..', '..');
const CORE = path.join(REPO, 'src', 'core');

async function lint(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: REPO });
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO, file) });
  return result!.messages.filter((m) => m.ruleId === 'loopx/subsystem-imports').map((m) => m.message);
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('core subsystems', () => {
  const entries = fs.readdirSync(CORE, { withFileTypes: true });
  const subsystems = entries.filter((e) => e.isDirectory()).map((e) => e.name);

  it('src/core holds the subsystem folders and its index.ts, about 15 entries at most', () => {
    assert.ok(entries.length <= 15, `src/core has ${entries.length} entries`);
    assert.deepEqual(
      entries.filter((e) => !e.isDirectory()).map((e) => e.name),
      ['index.ts'],
    );
    for (const s of subsystems) assert.ok(fs.existsSync(path.join(CORE, s, 'index.ts')), `${s}/index.ts`);
  });

  it('no file shares its name with a folder beside it', () => {
    const clashes: string[] = [];
    (function walk(dir: string) {
      const here = fs.readdirSync(dir, { withFileTypes: true });
      const folders = new Set(here.filter((e) => e.isDirectory()).map((e) => e.name));
      for (const e of here) {
        if (e.isDirectory()) walk(path.join(dir, e.name));
        else if (folders.has(e.name.replace(/\.[^.]+$/, '')))
          clashes.push(path.relative(REPO, path.join(dir, e.name)));
      }
    })(path.join(REPO, 'src'));
    assert.deepEqual(clashes, []);
  });

  it('the lint rule refuses an import into another subsystem’s file, from the core and from an adapter', async () => {
    assert.deepEqual(
      await lint(
        'src/core/contract/example.ts',
        "import { withLock } from '../store/lock';\nexport const x = withLock;\n",
      ),
      ["import the store subsystem through its surface '../store', not its file '../store/lock'"],
    );
    assert.deepEqual(
      await lint(
        'src/cli/commands/example.ts',
        "export { invoke } from '../../core/capabilities/registry';\n",
      ),
      [
        "import the capabilities subsystem through its surface '../../core/capabilities', not its file '../../core/capabilities/registry'",
      ],
    );
    assert.equal(
      (await lint('src/extension/example.ts', "export const m = import('../core/trust/keys');\n")).length,
      1,
      'a dynamic import too',
    );
  });

  it('the lint rule lets a subsystem import its own files, and others through index.ts', async () => {
    assert.deepEqual(await lint('src/core/store/example.ts', "export { withLock } from './lock';\n"), []);
    assert.deepEqual(
      await lint('src/core/contract/example.ts', "export { withLock } from '../store';\n"),
      [],
    );
    assert.deepEqual(
      await lint('src/core/contract/example.ts', "export { withLock } from '../store/index';\n"),
      [],
    );
    assert.deepEqual(await lint('src/cli/example.ts', "export * from '../core/index';\n"), []);
  });

  it('the webview, a browser, imports only the model and the views’ browser surface', async () => {
    assert.deepEqual(await lint('webview/example.ts', "export * from '../src/core/views/browser';\n"), []);
    assert.deepEqual(await lint('webview/example.ts', "export * from '../src/core/model';\n"), []);
    assert.equal((await lint('webview/example.ts', "export * from '../src/core/views';\n")).length, 1);
    assert.equal((await lint('webview/example.ts', "export * from '../src/core/store';\n")).length, 1);
  });

  it('nothing registers on import: no module is imported for its side effect alone', () => {
    const bare = /^import ['"][^'"]+['"];?$/m;
    const offenders = [
      ...tsFiles(path.join(REPO, 'src')),
      ...tsFiles(path.join(REPO, 'test')),
      ...tsFiles(path.join(REPO, 'scripts')),
    ]
      .filter((f) => !f.includes(`${path.sep}fixtures${path.sep}`))
      .filter((f) => {
        const m = fs.readFileSync(f, 'utf8').match(bare);
        // Test setup modules a runner loads on purpose are named for it; the core never is.
        return m !== null && /core/.test(m[0]);
      })
      .map((f) => path.relative(REPO, f));
    assert.deepEqual(offenders, []);
  });
});
