/**
 * Sending: an HTTP POST to a webhook the person configured, and a desktop notification. Only the
 * address in channels.json is contacted: no redirect is followed (a 3xx is an error), no proxy
 * from the environment is used, and an answer must come within 10 s. The desktop notification is
 * a program on PATH (`notify-send` on Linux, `osascript` on macOS) given an argument list, never
 * a shell, so no text in it is ever run.
 */
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import * as https from 'node:https';
import { forLogLine, VERSION } from '../model';

export const POST_TIMEOUT_MS = 10_000;
/** What is read of an answer's body: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Posts `body` (JSON) to `url`; resolves on a 2xx, rejects with an error saying what happened otherwise. */
export type Post = (url: string, body: string) => Promise<void>;
/** Shows a desktop notification; rejects with an error saying why it could not. */
export type ShowDesktop = (title: string, body: string) => Promise<void>;

export function postJson(url: string, body: string, timeoutMs = POST_TIMEOUT_MS): Promise<void> {
  const u = new URL(url);
  const lib = u.protocol === 'https:' ? https : u.protocol === 'http:' ? http : undefined;
  if (!lib) return Promise.reject(new Error(`not an http or https address (${u.protocol})`));
  return new Promise((resolve, reject) => {
    let settled = false;
    const end = (e?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (e) reject(e);
      else resolve();
    };
    const req = lib.request(
      u,
      {
        method: 'POST',
        // No agent: a fresh connection each time, nothing kept open that would hold the process.
        agent: false,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
          'user-agent': `loopx/${VERSION}`,
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('error', () => undefined);
        res.on('close', () => {
          if (status >= 200 && status < 300) return end();
          if (status >= 300 && status < 400)
            return end(
              new Error(
                `answered ${status} (a redirect: LoopX follows none; put the final address in channels.json)`,
              ),
            );
          end(
            new Error(
              `answered ${status}${res.statusMessage ? ` ${forLogLine(res.statusMessage, 80)}` : ''}`,
            ),
          );
        });
        res.resume();
      },
    );
    const timer = setTimeout(() => {
      end(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`));
      req.destroy();
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) =>
      end(new Error(`could not post: ${e.code ?? forLogLine(e.message, 200)}`)),
    );
    req.end(body);
  });
}

/** The program and arguments that show a desktop notification here, or why there is none. */
export function desktopCommand(
  platform: NodeJS.Platform,
  title: string,
  body: string,
): { file: string; args: string[] } | { problem: string } {
  if (platform === 'linux' || platform === 'freebsd' || platform === 'openbsd')
    return { file: 'notify-send', args: ['--app-name=LoopX', '--', title, body] };
  if (platform === 'darwin')
    return {
      file: 'osascript',
      // The texts are the script's arguments, never part of its source.
      args: [
        '-e',
        'on run argv',
        '-e',
        'display notification (item 2 of argv) with title (item 1 of argv)',
        '-e',
        'end run',
        '--',
        title,
        body,
      ],
    };
  return { problem: `desktop notifications are not supported on ${platform}` };
}

const INSTALL_HINT: Record<string, string> = {
  'notify-send': 'install libnotify (Debian and Ubuntu: apt install libnotify-bin)',
  osascript: 'osascript is part of macOS: is /usr/bin on PATH?',
};

/** Shows a desktop notification with the program on PATH (`env`'s PATH). */
export function showDesktop(env: NodeJS.ProcessEnv, platform = process.platform): ShowDesktop {
  return (title, body) =>
    new Promise((resolve, reject) => {
      const cmd = desktopCommand(platform, title, body);
      if ('problem' in cmd) return reject(new Error(cmd.problem));
      const child = spawn(cmd.file, cmd.args, { env, stdio: ['ignore', 'ignore', 'pipe'], shell: false });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-500)));
      const timer = setTimeout(() => child.kill('SIGKILL'), POST_TIMEOUT_MS);
      child.on('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          new Error(
            e.code === 'ENOENT'
              ? `${cmd.file} is not on PATH: ${INSTALL_HINT[cmd.file] ?? 'install it'}`
              : `${cmd.file} did not start: ${e.code ?? forLogLine(e.message, 200)}`,
          ),
        );
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) return resolve();
        const why = signal ? `was stopped (${signal})` : `exited ${code}`;
        reject(new Error(`${cmd.file} ${why}${err.trim() ? `: ${forLogLine(err.trim(), 200)}` : ''}`));
      });
    });
}
