import { Inject, Injectable } from '@nestjs/common';
import { randomId } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { WebhookRepository, WebhookSubscriptionRow } from '@app/persistence';
import {
  checkDestination,
  newWebhookSecret,
  parseWebhookUrl,
  WebhookDestinationError,
} from '@app/webhooks';
import { InvalidArguments, LimitReached, Refusal } from '../refusals/refusal';
import { pointerToken } from '../http/json-pointer';

/** Each event fans out to every subscription of its user; ten bounds that fan-out. */
export const MAX_WEBHOOKS_PER_USER = 10;
const MAX_DESCRIPTION_CHARS = 500;

/** Creating a subscription: validate the body and the destination, mint the secret. */
@Injectable()
export class WebhookSubscriptionsService {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly hooks: WebhookRepository,
  ) {}

  /** Returns the stored subscription and its secret (shown once). */
  async create(
    userId: string,
    body: unknown,
  ): Promise<{ row: WebhookSubscriptionRow; secret: string }> {
    const { url, description } = this.validate(body);
    // The quota first: a caller at the limit must not get DNS lookups done for free. This
    // early look is only a shortcut; the insert below counts again under the user's lock.
    if ((await this.hooks.countForUser(userId)) >= MAX_WEBHOOKS_PER_USER) throw tooMany();
    const policy = { allowPrivateNetworks: this.settings.webhooks.allowPrivateNetworks };
    try {
      await checkDestination(parseWebhookUrl(url, policy), policy);
    } catch (error) {
      if (error instanceof WebhookDestinationError) {
        throw new InvalidArguments('The webhook URL is not allowed.', [
          { path: '/url', message: error.message },
        ]);
      }
      throw error;
    }
    const secret = newWebhookSecret();
    const row = await this.hooks.createWithinCap(
      { id: randomId('wh_'), userId, url, description, secret },
      MAX_WEBHOOKS_PER_USER,
    );
    if (!row) throw tooMany();
    return { row, secret };
  }

  private validate(body: unknown): { url: string; description: string | null } {
    const errors: Array<{ path: string; message: string }> = [];
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (typeof b.url !== 'string' || b.url.length === 0) {
      errors.push({ path: '/url', message: 'is required and must be a string' });
    }
    const description = b.description ?? null;
    if (description !== null && typeof description !== 'string') {
      errors.push({ path: '/description', message: 'must be a string' });
    } else if (typeof description === 'string' && description.length > MAX_DESCRIPTION_CHARS) {
      errors.push({
        path: '/description',
        message: `must be at most ${MAX_DESCRIPTION_CHARS} characters`,
      });
    }
    for (const key of Object.keys(b)) {
      if (key !== 'url' && key !== 'description') {
        errors.push({ path: `/${pointerToken(key)}`, message: 'is not allowed' });
      }
    }
    if (errors.length > 0) throw new InvalidArguments('The webhook is invalid.', errors);
    return { url: b.url as string, description: description as string | null };
  }
}

function tooMany(): Refusal {
  return new LimitReached(`At most ${MAX_WEBHOOKS_PER_USER} webhooks per user.`);
}
