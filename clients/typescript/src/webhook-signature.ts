import { createHmac, timingSafeEqual } from 'node:crypto';

export interface WebhookDelivery {
  /** The subscription's secret, `whsec_…`, shown once by `POST /v1/webhooks`. */
  secret: string;
  /** The delivery's headers (any case): `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
  headers: Record<string, string | string[] | undefined>;
  /** The request body exactly as received (a string or the raw bytes), not re-serialised JSON. */
  body: string | Uint8Array;
  /** How far the timestamp may be from now, in seconds (replays of old deliveries); 300. */
  toleranceSeconds?: number;
  /** Now, in Unix seconds; the clock by default. */
  nowSeconds?: number;
}

/**
 * Verifies a webhook delivery the Standard Webhooks way: `webhook-signature` holds one or more
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed with the base64 part of the
 * secret after `whsec_`; the timestamp must be within the tolerance. True only for a delivery the
 * gateway signed with this secret.
 */
export function verifyWebhookSignature(delivery: WebhookDelivery): boolean {
  const header = (name: string): string | undefined => {
    const entry = Object.entries(delivery.headers).find(([key]) => key.toLowerCase() === name);
    const value = entry?.[1];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  if (!delivery.secret.startsWith('whsec_')) return false;
  const now = delivery.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (delivery.toleranceSeconds ?? 300)) return false;
  const key = Buffer.from(delivery.secret.slice('whsec_'.length), 'base64');
  const body =
    typeof delivery.body === 'string'
      ? Buffer.from(delivery.body, 'utf8')
      : Buffer.from(delivery.body);
  const expected = createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]))
    .digest();
  return signatures.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
