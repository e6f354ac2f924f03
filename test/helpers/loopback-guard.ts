// A preload for child Node processes that refuses every connection and lookup off loopback.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Printed (to stderr) by the guard whenever it refuses something; tests look for it. */
export const GUARD_MARKER = 'LOOPBACK-GUARD refused';

/*
 * Patching net.Socket.prototype.connect catches every TCP and TLS connection, fetch (undici)
 * included, since they all end in it; dns.lookup catches name resolution. Unix sockets pass.
 */
const GUARD_SOURCE = `
import net from 'node:net';
import dns from 'node:dns';
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '::ffff:127.0.0.1']);
function refuse(what) {
  process.stderr.write('${GUARD_MARKER} ' + what + '\\n');
  throw new Error('${GUARD_MARKER} ' + what);
}
function target(args) {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  if (first !== null && typeof first === 'object') {
    if (first.path !== undefined) return undefined;
    return first.host ?? 'localhost';
  }
  if (typeof first === 'number' || /^[0-9]+$/.test(String(first))) {
    return typeof args[1] === 'string' ? args[1] : 'localhost';
  }
  return undefined;
}
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const host = target(args);
  if (host !== undefined && !LOOPBACK.has(host)) refuse('connection to ' + host);
  return connect.apply(this, args);
};
const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
  if (!LOOPBACK.has(host)) refuse('lookup of ' + host);
  return lookup.call(this, host, ...rest);
};
const lookupPromise = dns.promises.lookup;
dns.promises.lookup = function (host, ...rest) {
  if (!LOOPBACK.has(host)) refuse('lookup of ' + host);
  return lookupPromise.call(this, host, ...rest);
};
`;

/** Writes the guard into `dir`; pass the returned path to node with `--import`. */
export function writeLoopbackGuard(dir: string): string {
  const path = join(dir, 'loopback-guard.mjs');
  writeFileSync(path, GUARD_SOURCE);
  return path;
}
