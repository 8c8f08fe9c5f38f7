#!/usr/bin/env node
// Makes media/icon.png, the 128x128 Marketplace / Open VSX icon, from media/loopx.svg (the
// activity-bar glyph): the glyph in white on a rounded dark-blue tile, rendered by Chromium
// through playwright-core (the same browser test/browser and test/ui use). The PNG is committed;
// run this again only when the glyph changes:
//
//   node scripts/build/make-icon.mjs [--chromium /usr/bin/chromium]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SIZE = 128;
const args = process.argv.slice(2);
const exe = args.includes('--chromium') ? args[args.indexOf('--chromium') + 1] : '/usr/bin/chromium';

const glyph = fs
  .readFileSync(path.join(ROOT, 'media', 'loopx.svg'), 'utf8')
  .replace(/currentColor/g, '#ffffff')
  .replace(/width="24" height="24"/, 'x="20" y="20" width="88" height="88"');
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}">
<defs><linearGradient id="bg" x1="0" y1="0" x2="1" y2="1">
<stop offset="0" stop-color="#2f6fe4"/><stop offset="1" stop-color="#1b2330"/></linearGradient></defs>
<rect x="2" y="2" width="124" height="124" rx="26" fill="url(#bg)"/>
${glyph}
</svg>`;

const browser = await chromium.launch({
  executablePath: exe,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
});
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  const png = await page.locator('svg').first().screenshot({ omitBackground: true });
  const out = path.join(ROOT, 'media', 'icon.png');
  fs.writeFileSync(out, png);
  console.log(`${path.relative(ROOT, out)}: ${SIZE}x${SIZE}, ${png.length} bytes`);
} finally {
  await browser.close();
}
