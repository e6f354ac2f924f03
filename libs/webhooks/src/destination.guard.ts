import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPublicAddress } from './address.policy';

/** Why a webhook URL is refused: malformed, pointing inward, or not resolvable now. */
export type DestinationProblem = 'invalid' | 'forbidden' | 'unresolvable';

/** A refused webhook destination; the message names the rule, never a secret. */
export class WebhookDestinationError extends Error {
  constructor(
    readonly problem: DestinationProblem,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookDestinationError';
  }
}

/** Resolves a host name to all its addresses (injectable so tests can fake DNS). */
export type HostResolver = (
  hostname: string,
) => Promise<Array<{ address: string; family: number }>>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address in resolver order. */
export const systemResolver: HostResolver = (hostname) =>
  lookup(hostname, { all: true, verbatim: true });

/** A destination checked at one instant: the request must connect to exactly this address. */
export interface CheckedDestination {
  url: URL;
  address: string;
  family: 4 | 6;
}

export interface DestinationPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: any address, and plain http too (local use and tests). */
  allowPrivateNetworks: boolean;
  resolver?: HostResolver;
}

const MAX_URL_CHARS = 2048;
/** A resolver that does not answer in this long counts as not resolving (a hung DNS server must
 * not hold a creation request, or a delivery slot, for the resolver's own minutes of retries). */
export const DNS_TIMEOUT_MS = 3000;

/**
 * The one refusal of a host, whether it resolves to an inward address or not at all: telling
 * the two apart would let a caller map which internal host names exist.
 */
export const REFUSED_HOST_MESSAGE =
  'must name a host that resolves, within a few seconds, only to public addresses';

/** Parses and checks a webhook URL's form: https (or http when allowed), no credentials. */
export function parseWebhookUrl(raw: string, policy: DestinationPolicy): URL {
  if (raw.length > MAX_URL_CHARS) {
    throw new WebhookDestinationError('invalid', `must be at most ${MAX_URL_CHARS} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookDestinationError('invalid', 'must be an absolute URL');
  }
  const schemes = policy.allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw new WebhookDestinationError(
      'invalid',
      policy.allowPrivateNetworks ? 'must use https or http' : 'must use https',
    );
  }
  // Credentials in a URL end up in logs and in the deliveries list; a receiver checks the
  // signature instead.
  if (url.username || url.password) {
    throw new WebhookDestinationError('invalid', 'must not contain credentials');
  }
  return url;
}

/**
 * Resolves the URL's host now and checks every address it resolves to. Called at creation and
 * again before each delivery; the request then connects to the returned address only, so a DNS
 * answer that changes between check and connect (a rebind) cannot redirect it.
 */
export async function checkDestination(
  url: URL,
  policy: DestinationPolicy,
): Promise<CheckedDestination> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    addresses = await resolveWithin(policy.resolver ?? systemResolver, host, DNS_TIMEOUT_MS);
  }
  if (addresses.length === 0) {
    throw new WebhookDestinationError('unresolvable', REFUSED_HOST_MESSAGE);
  }
  // All, not any: a host with one private address among public ones is still a way inside.
  if (!policy.allowPrivateNetworks && addresses.some((a) => !isPublicAddress(a.address))) {
    throw new WebhookDestinationError('forbidden', REFUSED_HOST_MESSAGE);
  }
  const [first] = addresses;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** The resolver's answer, or none when it fails or takes longer than `timeoutMs`. */
async function resolveWithin(
  resolver: HostResolver,
  host: string,
  timeoutMs: number,
): Promise<Array<{ address: string; family: number }>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<[]>((resolve) => {
    timer = setTimeout(() => resolve([]), timeoutMs);
  });
  try {
    return await Promise.race([resolver(host).catch(() => []), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
