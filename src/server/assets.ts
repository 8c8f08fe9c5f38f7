/**
 * The files the dashboard page loads, from a fixed allow-list: a request names one of them and
 * never a path, so nothing from a URL reaches the file system. They hold no workspace data and
 * need no session.
 */
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { SECURITY_HEADERS, sendError } from './responses';

/** Served name -> where it lives under the package root, and its type. */
export const ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  'webview.js': { file: 'dist/webview.js', type: 'text/javascript; charset=utf-8' },
  'dashboard.css': { file: 'media/dashboard.css', type: 'text/css; charset=utf-8' },
  'browser-theme.css': { file: 'media/browser-theme.css', type: 'text/css; charset=utf-8' },
  /** The decision and passkey pages' script (webview/decide/, with @simplewebauthn/browser). */
  'decide.js': { file: 'dist/decide.js', type: 'text/javascript; charset=utf-8' },
};

/** Package-relative paths of every asset: what the CLI tarball and install-command must ship. */
export const ASSET_FILES: readonly string[] = Object.values(ASSETS).map((a) => a.file);

/**
 * The package root (the folder holding dist/ and media/): the bundles run from dist/ (the
 * extension, dist/cli.js), the sources from src/server/ (tests through tsx).
 */
export function defaultAssetsDir(): string {
  return path.basename(__dirname) === 'dist' ? path.dirname(__dirname) : path.resolve(__dirname, '..', '..');
}

export function sendAsset(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  name: string,
  assetsDir: string,
): void {
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) {
    sendError(
      res,
      404,
      'not_found',
      `no asset of that name: the page loads ${Object.keys(ASSETS).join(', ')}`,
    );
    return;
  }
  let body: Buffer;
  try {
    body = fs.readFileSync(path.join(assetsDir, asset.file));
  } catch {
    sendError(
      res,
      404,
      'not_found',
      `${asset.file} is missing from this LoopX install: build it (\`npm run build\`) or reinstall the CLI`,
      { reason: 'asset_missing' },
    );
    return;
  }
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': asset.type,
    'Content-Length': String(body.length),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
