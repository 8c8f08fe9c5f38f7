/**
 * Writes `contributes.languageModelTools` in package.json from the agent tools (src/core), so the
 * manifest VS Code reads and the tools we register cannot drift apart. A unit test fails when
 * they differ: run `node --import tsx scripts/build/sync-manifest.ts` after changing a tool.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_TOOLS, toolInputJsonSchema } from '../../src/core/index';

export function languageModelToolsManifest() {
  return AGENT_TOOLS.map((t) => ({
    name: t.name,
    displayName: t.title,
    toolReferenceName: t.name.replace(/^loopx_/, 'loopx-').replace(/_/g, '-'),
    canBeReferencedInPrompt: true,
    icon: '$(sync)',
    userDescription: t.title,
    modelDescription: t.description,
    tags: ['loopx', t.writes ? 'loopx-write' : 'loopx-read'],
    when: 'loopx.hasWorkspace',
    inputSchema: toolInputJsonSchema(t),
  }));
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(__filename)) {
  const file = path.join(__dirname, '..', '..', 'package.json');
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
  pkg.contributes.languageModelTools = languageModelToolsManifest();
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
  console.log(`package.json: ${pkg.contributes.languageModelTools.length} language-model tools`);
}
