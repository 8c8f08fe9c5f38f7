/**
 * One request to a loopback server, as a browser or curl would send it: the Host header of the
 * port (the caller's own when it gives one), no keep-alive. An event stream is cut after its first frame (it never ends by itself).
 */
import * as http from 'node:http';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export function loopbackRequest(
  port: number,
  target: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: target,
        method: o.method ?? 'GET',
        headers: { Host: `127.0.0.1:${port}`, ...o.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (res.headers['content-type']?.startsWith('text/event-stream')) res.destroy();
        });
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString(),
          });
        res.on('end', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}
