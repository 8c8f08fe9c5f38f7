#!/usr/bin/env node
'use strict';
// The `loopx` command: the bundled CLI in dist/ (built by `npm run build`).
const path = require('node:path');
const cli = path.join(__dirname, '..', 'dist', 'cli.js');
try {
  require(cli);
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes(cli)) {
    process.stderr.write(`loopx: the CLI is not built yet: run \`npm run build\` in ${path.dirname(__dirname)}\n`);
    process.exit(1);
  }
  throw e;
}
