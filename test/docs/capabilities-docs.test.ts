/**
 * docs/capabilities/ and schemas/capability.schema.json are generated from the registry
 * (`npm run docs`): regenerated into a temp folder, they must equal what is checked in, or the
 * test names the stale file and says how to fix it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeCapabilityDocs, capabilityDocs } from '../../scripts/docs/capability-docs';
import { listCapabilities } from '../../src/core/capabilities/registry';

const REPO = path.resolve(__dirname, '..', '..');
const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

describe('the capability docs', () => {
  it('are current: regenerating them changes no file', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-docs-'));
    made.push(tmp);
    const files = writeCapabilityDocs(tmp);
    for (const rel of files) {
      const mine = path.join(REPO, rel);
      assert.ok(fs.existsSync(mine), `${rel} is missing: run npm run docs`);
      assert.equal(
        fs.readFileSync(mine, 'utf8'),
        fs.readFileSync(path.join(tmp, rel), 'utf8'),
        `${rel} is stale: run npm run docs`,
      );
    }
    for (const name of fs.readdirSync(path.join(REPO, 'docs', 'capabilities')))
      assert.ok(
        files.includes(`docs/capabilities/${name}`),
        `docs/capabilities/${name} documents no capability: run npm run docs`,
      );
  });

  it('document every core capability and built-in workflow, deterministically', () => {
    const a = capabilityDocs();
    const b = capabilityDocs();
    assert.deepEqual([...a.entries()], [...b.entries()]);
    for (const c of listCapabilities()) assert.ok(a.has(`docs/capabilities/${c.id}.md`), c.id);
    assert.ok(
      a.has('docs/capabilities/workflow-issue-fix.md') && a.has('docs/capabilities/workflow-release.md'),
    );
    const index = a.get('docs/capabilities/README.md')!;
    assert.match(index, /\[`workflow\.run`\]\(workflow\.run\.md\)/);
    assert.match(
      index,
      /\[`issue-fix`\]\(workflow-issue-fix\.md\) \| .* \| turns 12, tokens 400,000, cost \$5 \|/,
    );
    assert.match(a.get('docs/capabilities/gate.approve.md')!, /human-only/);
  });
});
