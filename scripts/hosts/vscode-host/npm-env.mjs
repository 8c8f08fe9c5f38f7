// The environment for an `npm install` that the host installer runs itself.
//
// Under `npm run setup` the environment carries the outer npm's whole configuration as
// `npm_config_*` variables, and a nested npm reads them as its own settings. The one that broke a
// new user's first setup: `npm_config_user_agent` ("npm/11 node/v20 ...") becomes the inner npm's
// user agent, and code-server's postinstall reads the Node major version from it, so it refused to
// install under Node 24. The same install run from a shell passed. So a nested npm gets only the
// settings that say how to reach the registry (and where the user's npmrc files are, which it
// reads again itself), and none of what `npm run` adds about the outer package or its run.
import path from 'node:path';

// Network and registry settings: an npmrc or a proxy set in the environment must keep working.
const KEEP_NPM_CONFIG = new Set([
  'registry',
  'proxy',
  'https_proxy',
  'http_proxy',
  'noproxy',
  'no_proxy',
  'cafile',
  'ca',
  'cert',
  'key',
  'strict_ssl',
  'local_address',
  'maxsockets',
  'offline',
  'prefer_offline',
  'prefer_online',
  'userconfig',
  'globalconfig',
  'cache',
]);

function keepNpmConfig(name) {
  const key = name.slice('npm_config_'.length).toLowerCase();
  return (
    KEEP_NPM_CONFIG.has(key) ||
    key.startsWith('fetch_') || // fetch_retries, fetch_timeout, ...
    key.endsWith(':registry') || // @scope:registry
    key.startsWith('//') // //host/:_authToken and friends
  );
}

// What `npm run` itself sets for the script it runs (besides npm_config_*).
const RUN_SCRIPT_VARS =
  /^(npm_lifecycle_|npm_package_)|^(npm_execpath|npm_node_execpath|npm_command|INIT_CWD|NODE)$/i;

// `npm run` puts every node_modules/.bin from the package up to / and its own node-gyp shim first
// on PATH; a nested install must not pick the outer project's tools from there.
function isRunScriptPathEntry(dir) {
  const d = dir.replace(/[\\/]+$/, '');
  return d.endsWith(`${path.sep}node_modules${path.sep}.bin`) || d.endsWith(`${path.sep}node-gyp-bin`);
}

/**
 * The environment `env` as a shell would have it, without what an enclosing `npm run` added, plus
 * `extra` (applied last, so a caller's PATH or npm_config_nodedir wins).
 * @param {NodeJS.ProcessEnv} env
 * @param {NodeJS.ProcessEnv} [extra]
 * @returns {NodeJS.ProcessEnv}
 */
export function nestedNpmEnv(env, extra = {}) {
  const out = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (/^npm_config_/i.test(k) && !keepNpmConfig(k)) continue;
    if (RUN_SCRIPT_VARS.test(k)) continue;
    out[k] = v;
  }
  if (out.PATH !== undefined) {
    out.PATH = out.PATH.split(path.delimiter)
      .filter((d) => d && !isRunScriptPathEntry(d))
      .join(path.delimiter);
  }
  return { ...out, ...extra };
}
