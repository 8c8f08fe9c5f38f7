/**
 * Which addresses and Host header values count as this machine: the bind check before and after
 * `listen`, and the Host/Origin values the request guard accepts once the port is known.
 */
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import * as os from 'node:os';

/** True for 127.0.0.0/8, ::1 (also written out or IPv4-mapped) and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost') return true;
  if (h.startsWith('::ffff:') && net.isIPv4(h.slice(7))) h = h.slice(7);
  if (net.isIPv4(h)) return h.split('.')[0] === '127';
  if (net.isIPv6(h)) {
    // Every spelling of ::1 ("0:0:0:0:0:0:0:1", "::0:1", ...).
    const [head = '', tail = ''] = h.includes('::') ? h.split('::') : [h, ''];
    const groups = [...(head ? head.split(':') : []), ...(tail ? tail.split(':') : [])];
    if (groups.length === 0 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return false;
    const nums = groups.map((g) => parseInt(g, 16));
    return nums.at(-1) === 1 && nums.slice(0, -1).every((n) => n === 0);
  }
  return false;
}

export const isWildcard = (h: string) => h === '0.0.0.0' || h === '::' || h === '[::]';

/** The bound address as it appears in a URL or Host header: IPv6 in brackets. */
export function boundHostName(addr: AddressInfo): string {
  return addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
}

/**
 * Host header values (lower case, with the port) that name this server. `host` is the address
 * asked for, `addr` where the server ended up.
 */
export function allowedHostHeaders(host: string, addr: AddressInfo): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  if (!isWildcard(addr.address)) names.add(boundHostName(addr).toLowerCase());
  if (!isLoopbackHost(host) && !net.isIP(host)) names.add(host.toLowerCase()); // a name given with the unsafe flag
  if (isWildcard(addr.address)) {
    // Bound everywhere (unsafe flag): this machine's own addresses are acceptable Host values.
    for (const list of Object.values(os.networkInterfaces())) {
      for (const i of list ?? []) names.add(i.family === 'IPv6' ? `[${i.address.toLowerCase()}]` : i.address);
    }
  }
  const port = addr.port;
  return new Set([...names].flatMap((n) => (port === 80 ? [`${n}:${port}`, n] : [`${n}:${port}`])));
}
