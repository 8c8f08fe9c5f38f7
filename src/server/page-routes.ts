/**
 * The dashboard in a browser: `/` (the same page as the VS Code webview, with a fresh nonce and
 * its CSP as a header too), `/login?code=` (a one-time code from login.ts buys a session cookie)
 * and `/assets/<name>` (assets.ts). The pages of fixed text here say what to do next; no
 * workspace data, no token and no session id is ever written into a page.
 */
import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import { browserDashboardCsp, dashboardHtml } from '../core/views';
import { sendAsset } from './assets';
import type { LoginRefusal, LoginVerifier, Sessions } from './login';
import { sendError, sendHtml } from './responses';

export interface PageRoutes {
  /** Answers `/`, `/login` and `/assets/*`; false for any other path. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): boolean;
}

const LOGIN_HINT = (port: number) =>
  `Run <code>loopx status-server --login-link --port ${port}</code> in the workspace (or, in VS Code, <em>LoopX: Open Dashboard in Browser</em>) and open the link it prints. A link works once, for 60 seconds.`;

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${title}</title>
</head>
<body>
<h1>${title}</h1>
${body}
</body>
</html>
`;
}

const REFUSAL_TEXT: Record<LoginRefusal, string> = {
  login_code_used: 'This login link was already used: each link works once.',
  login_code_expired: 'This login link has expired: a link works for 60 seconds.',
  login_code_invalid: 'This login link is not valid for this server.',
};

export function signedOutPage(port: number): string {
  return page('LoopX: sign in to see the dashboard', `<p>${LOGIN_HINT(port)}</p>`);
}

const wantsJson = (req: http.IncomingMessage) => /\bapplication\/json\b/i.test(req.headers.accept ?? '');

export function createPageRoutes(o: {
  port: () => number;
  verifier: LoginVerifier;
  sessions: Sessions;
  authorized: (req: http.IncomingMessage) => boolean;
  assetsDir: string;
  log: (line: string) => void;
}): PageRoutes {
  function login(req: http.IncomingMessage, res: http.ServerResponse) {
    const query = new URLSearchParams((req.url ?? '').slice((req.url ?? '').indexOf('?') + 1));
    const codes = (req.url ?? '').includes('?') ? query.getAll('code') : [];
    const refusal: LoginRefusal | undefined =
      codes.length === 1 ? o.verifier.redeem(codes[0]!) : 'login_code_invalid';
    if (refusal) {
      o.log(`login refused: ${refusal}`);
      const message = `${REFUSAL_TEXT[refusal]} Get a new one with \`loopx status-server --login-link --port ${o.port()}\`.`;
      if (wantsJson(req)) return sendError(res, 401, 'unauthorized', message, { reason: refusal });
      return sendHtml(
        res,
        401,
        page('LoopX: login link refused', `<p>${REFUSAL_TEXT[refusal]}</p>\n<p>${LOGIN_HINT(o.port())}</p>`),
      );
    }
    const id = o.sessions.create();
    // The code is spent; the URL that carried it is replaced so it stays in no history entry.
    // Relative, like every URL of the page: behind a path proxy (code-server's /proxy/<port>/)
    // the dashboard is one folder down.
    res.writeHead(303, {
      'Set-Cookie': o.sessions.setCookie(id),
      Location: './',
      'Content-Length': '0',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    });
    res.end();
  }

  function dashboard(req: http.IncomingMessage, res: http.ServerResponse) {
    if (!o.authorized(req)) {
      if (wantsJson(req))
        return sendError(
          res,
          401,
          'unauthorized',
          `sign in first: \`loopx status-server --login-link --port ${o.port()}\``,
        );
      return sendHtml(res, 401, signedOutPage(o.port()));
    }
    const nonce = randomBytes(18).toString('base64url');
    const csp = browserDashboardCsp(nonce);
    const html = dashboardHtml({
      cspSource: "'self'",
      nonce,
      csp,
      scriptUri: 'assets/webview.js',
      themeUris: ['assets/browser-theme.css'],
      styleUri: 'assets/dashboard.css',
    });
    sendHtml(res, 200, html, { 'Content-Security-Policy': csp });
  }

  return {
    handle(req, res, pathname) {
      if (pathname === '/') {
        dashboard(req, res);
        return true;
      }
      if (pathname === '/login') {
        // A HEAD (a link preview, say) must not spend the code.
        if (req.method === 'HEAD')
          sendError(res, 405, 'method_not_allowed', 'open the login link with GET', {}, { Allow: 'GET' });
        else login(req, res);
        return true;
      }
      if (pathname.startsWith('/assets/')) {
        sendAsset(req, res, pathname.slice('/assets/'.length), o.assetsDir);
        return true;
      }
      return false;
    },
  };
}
