import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks secrets are `whsec_` + base64 of the key bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
// 32 bytes = the HMAC-SHA256 block-size-safe key length Standard Webhooks recommends (24–64).
const SECRET_BYTES = 32;
/** How old a `webhook-timestamp` a receiver accepts by default, against replays. */
export const DEFAULT_TOLERANCE_S = 300;

/** A new subscription secret, shown to its owner once. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * The `webhook-signature` value for one message: `v1,` + base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_`.
 */
export function signWebhook(secret: string, id: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampS}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/** The three headers a receiver checks. */
export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Verifies a received message as a receiver would: any of the space-separated `v1,` signatures
 * matches (constant-time), and the timestamp is within `toleranceS` of `nowS`.
 */
export function verifyWebhook(
  secret: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  body: string,
  nowS = Math.floor(Date.now() / 1000),
  toleranceS = DEFAULT_TOLERANCE_S,
): boolean {
  const id = single(headers['webhook-id']);
  const timestamp = Number(single(headers['webhook-timestamp']));
  const signatures = single(headers['webhook-signature']);
  if (!id || !signatures || !Number.isInteger(timestamp)) return false;
  if (Math.abs(nowS - timestamp) > toleranceS) return false;
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body));
  return signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  return Buffer.from(encoded, 'base64');
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
