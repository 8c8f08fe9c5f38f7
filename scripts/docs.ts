// Writes the capability catalog (docs/capabilities/) and schemas/capability.schema.json from the
// registry. Usage: npm run docs [-- --out DIR] (default: this repository).
import * as path from 'node:path';
import { writeCapabilityDocs } from './capability-docs';

const i = process.argv.indexOf('--out');
const root = i > 0 ? path.resolve(process.argv[i + 1] ?? '.') : path.resolve(__dirname, '..');
const written = writeCapabilityDocs(root);
console.log(`wrote ${written.length} files under ${root}`);
