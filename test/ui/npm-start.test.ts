/**
 * The README's first command, `npm start`, as a person meets it: the demo workspace inside a git
 * checkout (as `.loopx-demo/` is), the printed URL opened in Chromium, the LoopX view with the
 * demo goal, no notification but the gate's, "LoopX: Open Dashboard in Browser" opening the
 * dashboard (its status server on a free port: code-server has 8080), and a SIGTERM to npm that
 * leaves nothing running.
 * Screenshot: test-results/ui/npm-start.png.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkNpmStart } from '../helpers/npm-start';
import { REPO, loadScript, type NpmEnvModule } from '../helpers/workbench';

// Inside the checkout, like the default `.loopx-demo/`: VS Code's git extension sees the
// checkout in the parent folders. (test-results/ is ignored by git.)
const DEMO = path.join(REPO, 'test-results', 'npm-start', 'demo');

describe('npm start', () => {
  after(() => fs.rmSync(path.dirname(DEMO), { recursive: true, force: true }));

  it(
    'opens the demo in VS Code with only the gate notification, opens the dashboard in the browser, and SIGTERM stops everything',
    { timeout: 600_000 },
    async () => {
      fs.rmSync(path.dirname(DEMO), { recursive: true, force: true });
      // As from a person's shell, not with the npm_* settings of the `npm test` running this file.
      const { nestedNpmEnv } = await loadScript<NpmEnvModule>('scripts/hosts/vscode-host/npm-env.mjs');
      const printed = await checkNpmStart({
        cwd: REPO,
        args: [DEMO],
        env: nestedNpmEnv(process.env),
        shotFile: path.join(REPO, 'test-results', 'ui', 'npm-start.png'),
      });
      assert.match(printed, /Refactor Payment Module/);
    },
  );
});
