/**
 * The pages of deciding from a browser (`/decide`, `/decide/<workspace>/<goal>/<gate>`,
 * `/grant/<workspace>/<goal>`, `/reward/<workspace>/<goal>`, `/passkey/register`): fixed text and
 * the page script (`assets/decide.js`, webview/decide/), with a fresh script nonce and a CSP of
 * their own. Like the dashboard, no workspace data is ever written into the HTML: the script asks
 * for it as JSON and shows it as text. Every URL is
 * relative (`base` leads back to the server's root), so the pages work behind a path proxy and
 * at a forwarded port.
 */
import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import { sendHtml } from './responses';

export type DecidePageKind = 'list' | 'gate' | 'grant' | 'reward' | 'register';

const TITLES: Record<DecidePageKind, string> = {
  list: 'LoopX: decisions waiting for you',
  gate: 'LoopX: decide on a gate',
  grant: 'LoopX: grant budget',
  reward: 'LoopX: record a reward',
  register: 'LoopX: add a passkey',
};

function csp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa;
  --line: #d1d9e0; --accent: #0969da; --ok: #1a7f37; --bad: #cf222e; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117;
  --panel: #151b23; --line: #3d444d; --accent: #4493f8; --ok: #3fb950; --bad: #f85149; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; justify-content: space-between; align-items: center; padding: 12px 24px; border-bottom: 1px solid var(--line); }
header h1 { font-size: 17px; margin: 0; }
main { max-width: 860px; margin: 0 auto; padding: 20px 24px 48px; }
h2 { font-size: 19px; margin: 0 0 4px; }
.muted { color: var(--muted); }
pre.facts { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); border: 1px solid var(--line);
  border-radius: 6px; padding: 14px 16px; font: 13.5px/1.55 ui-monospace, SFMono-Regular, Menlo, monospace; }
ul.items { list-style: none; padding: 0; margin: 0; }
ul.items li { border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 0 0 10px; }
ul.items code { display: block; white-space: pre-wrap; overflow-wrap: anywhere; margin-top: 4px; }
a { color: var(--accent); }
label { display: block; font-weight: 600; margin: 16px 0 6px; }
textarea { width: 100%; min-height: 64px; font: inherit; padding: 8px; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--fg); }
.actions { display: flex; gap: 10px; margin-top: 14px; flex-wrap: wrap; }
input { font: inherit; width: 12em; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--fg); }
button { font: inherit; font-weight: 600; padding: 8px 16px; border-radius: 6px; border: 1px solid var(--line);
  background: var(--panel); color: var(--fg); cursor: pointer; }
button.approve { background: var(--ok); border-color: var(--ok); color: #fff; }
button.reject { background: var(--bad); border-color: var(--bad); color: #fff; }
button:disabled { opacity: 0.55; cursor: default; }
ul.items ul.rewarded { margin: 6px 0 0; padding-left: 18px; list-style: disc; }
ul.items ul.rewarded li { border: 0; border-radius: 0; padding: 0; margin: 2px 0; }
ul.items li .row { display: flex; gap: 12px; flex-wrap: wrap; align-items: flex-end; }
ul.items li .row label { margin-top: 10px; }
.message { margin-top: 16px; padding: 10px 14px; border-radius: 6px; border: 1px solid var(--line); }
.message.error { border-color: var(--bad); color: var(--bad); }
.message.done { border-color: var(--ok); color: var(--ok); }
`;

/** Sends one of the pages: fixed text, the script with its nonce, and the CSP as a header too. */
export function sendDecidePage(res: http.ServerResponse, kind: DecidePageKind, base: string): void {
  const nonce = randomBytes(18).toString('base64url');
  const policy = csp(nonce);
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${TITLES[kind]}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header><h1>LoopX</h1><span id="who" class="muted"></span></header>
<main id="app" data-page="${kind}" data-base="${base}"><p class="muted">Loading…</p></main>
<noscript><p>This page needs JavaScript: a passkey is used through the browser’s WebAuthn API.</p></noscript>
<script nonce="${nonce}" src="${base}assets/decide.js"></script>
</body>
</html>
`;
  sendHtml(res, 200, html, { 'Content-Security-Policy': policy });
}
