import { BlockList, isIPv4, isIPv6 } from 'node:net';

// Destinations a webhook must never reach: an internal service, the cloud metadata endpoint
// (169.254.169.254), the pod's own loopback. Sources: IANA special-purpose registries.
const IPV4_BLOCKED: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (shared)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const IPV6_BLOCKED: ReadonlyArray<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): translates to whatever IPv4 the site chose
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routable inside some networks)
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [net, prefix] of IPV4_BLOCKED) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of IPV6_BLOCKED) blocked.addSubnet(net, prefix, 'ipv6');

/**
 * Whether a webhook may connect to `address` (an IP literal). IPv6 forms that carry an IPv4
 * address (IPv4-mapped `::ffff:a.b.c.d`, SIIT-translated `::ffff:0:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32` with its server and its
 * obfuscated client) are judged by every IPv4 address inside, so `::ffff:127.0.0.1` is loopback.
 * Local-use NAT64 (`64:ff9b:1::/48`) is refused whole: its mapping is the site's own. Anything
 * that is not an IP literal is refused.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) return !blocked.check(bare, 'ipv4');
  if (!isIPv6(bare)) return false;
  if (blocked.check(bare, 'ipv6')) return false;
  const embedded = embeddedIpv4(ipv6Words(bare));
  return embedded.every((v4) => isPublicAddress(v4));
}

/** The IPv4 addresses an IPv6 address carries by one of the standard embeddings (often none). */
function embeddedIpv4(w: number[]): string[] {
  const zeros = (from: number, to: number): boolean => w.slice(from, to).every((x) => x === 0);
  const v4 = (hi: number, lo: number): string => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  if (zeros(0, 5) && w[5] === 0xffff) return [v4(w[6], w[7])]; // ::ffff:0:0/96 mapped
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return [v4(w[6], w[7])]; // SIIT translated
  if (zeros(0, 6) && (w[6] !== 0 || w[7] > 1)) return [v4(w[6], w[7])]; // ::/96 compatible
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return [v4(w[6], w[7])]; // NAT64
  if (w[0] === 0x2002) return [v4(w[1], w[2])]; // 6to4
  // Teredo: the server's address, and the client's with every bit flipped.
  if (w[0] === 0x2001 && w[1] === 0) return [v4(w[2], w[3]), v4(~w[6] & 0xffff, ~w[7] & 0xffff)];
  return [];
}

/** The eight 16-bit words of a valid IPv6 literal (with `::` and a trailing dotted quad). */
function ipv6Words(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined): number[] =>
    part ? part.split(':').map((x) => parseInt(x, 16)) : [];
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}
