// Writes the capability catalog (docs/capabilities/) and schemas/capability.schema.json from the
// registry, and the JSON Schemas of the documents LoopX prints (schemas/loopx.*.schema.json,
// scripts/docs/output-schemas.ts). Usage: npm run docs [-- --out DIR] (default: this repository).
import * as path from 'node:path';
import { writeCapabilityDocs } from './capability-docs';
import { writeOutputSchemas } from './output-schemas';

const i = process.argv.indexOf('--out');
const root = i > 0 ? path.resolve(process.argv[i + 1] ?? '.') : path.resolve(__dirname, '..', '..');
const written = writeCapabilityDocs(root);
writeOutputSchemas(root).then(
  (schemas) => console.log(`wrote ${written.length + schemas.length} files under ${root}`),
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
