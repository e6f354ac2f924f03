import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TaskEventRow, TaskRepository, TaskRow } from '@app/persistence';
import { acceptsAnswers, inputRequiredView } from '@app/views';

/** The path of the answer page on the API's port; the token rides in the query string. */
export const ANSWER_LINK_PATH = '/console/answer';

/** What an answer link grants: these questions of this task, until `expiresAt` (Unix seconds). */
export interface AnswerGrant {
  taskId: string;
  keys: string[];
  expiresAt: number;
}

/** Why a token was refused: `invalid` (malformed or not signed by a key we hold) or `expired`. */
export type AnswerLinkRefusal = 'invalid' | 'expired';

/** Version prefix of the token, so a later format can be told apart without guessing. */
const VERSION = 'a1';
/** Bounds what the verifier parses at all: a token is far shorter than this. */
const MAX_TOKEN_CHARS = 8192;

/**
 * Signs and verifies answer links (docs/console.md, "Answer links"): a token is
 * `a1.<base64url JSON {t, k, e}>.<base64url HMAC-SHA256>` over the version and the payload. The
 * first key signs and every key verifies, so a key is rotated by putting the new one first and
 * dropping the old one once the links it signed have expired. HMAC from node:crypto: the API and
 * the pollers share the keys through their settings, and nothing is stored per link.
 */
export class AnswerLinkSigner {
  private readonly keys: Buffer[];

  /** @param keys ANSWER_LINK_KEYS, at least one: the first signs. */
  constructor(keys: readonly string[]) {
    if (keys.length === 0) throw new Error('AnswerLinkSigner needs at least one key');
    this.keys = keys.map((key) => Buffer.from(key, 'utf8'));
  }

  sign(grant: AnswerGrant): string {
    const payload = Buffer.from(
      JSON.stringify({ t: grant.taskId, k: grant.keys, e: grant.expiresAt }),
    ).toString('base64url');
    return `${VERSION}.${payload}.${mac(this.keys[0], payload).toString('base64url')}`;
  }

  /** The grant of a token signed by one of our keys and not expired at `nowSeconds`. */
  verify(token: string, nowSeconds: number): AnswerGrant | AnswerLinkRefusal {
    if (token.length > MAX_TOKEN_CHARS) return 'invalid';
    const [version, payload, signature, ...rest] = token.split('.');
    if (version !== VERSION || !payload || !signature || rest.length > 0) return 'invalid';
    const given = Buffer.from(signature, 'base64url');
    // Buffer.from ignores characters outside the alphabet: compare the canonical form too, so a
    // token changed by one character never verifies.
    if (given.toString('base64url') !== signature) return 'invalid';
    const signedByUs = this.keys.some((key) => {
      const expected = mac(key, payload);
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
    if (!signedByUs) return 'invalid';
    const grant = parseGrant(payload);
    if (!grant) return 'invalid';
    return grant.expiresAt <= nowSeconds ? 'expired' : grant;
  }
}

/** Where answer links point and how long they live (settings.console). */
export interface AnswerLinkOptions {
  publicBaseUrl: string;
  ttlSeconds: number;
}

/**
 * The answer link of a `task.input_required` event, or null: the task must still wait for answers
 * the gateway can pass on, and the link covers the questions open now. It expires `ttlSeconds`
 * after the event was written, so every delivery of one event carries the same link while its
 * questions stay the same.
 */
export function answerLinkFor(
  signer: AnswerLinkSigner,
  options: AnswerLinkOptions,
  task: TaskRow | null,
  eventCreatedAt: Date,
): string | null {
  // inputRequiredView is null unless the task is input_required.
  if (!task || task.cancelRequestedAt !== null || !acceptsAnswers(task)) return null;
  const keys = Object.keys(inputRequiredView(task)?.requests ?? {}).sort();
  if (keys.length === 0) return null;
  const expiresAt = Math.floor(eventCreatedAt.getTime() / 1000) + options.ttlSeconds;
  const token = signer.sign({ taskId: task.id, keys, expiresAt });
  return `${options.publicBaseUrl}${ANSWER_LINK_PATH}?token=${token}`;
}

/**
 * The answer links of events, for the two places an event leaves the gateway (the API's SSE
 * stream, the pollers' webhook deliveries): only `task.input_required` gets one. The link is added
 * where the event is sent, never stored, so no value derived from the keys reaches the database.
 */
export class EventAnswerLinks {
  private readonly signer: AnswerLinkSigner;

  constructor(
    keys: readonly string[],
    private readonly options: AnswerLinkOptions,
    private readonly tasks: Pick<TaskRepository, 'findForUser'>,
  ) {
    this.signer = new AnswerLinkSigner(keys);
  }

  /**
   * From the settings' `console` part: undefined (links off) unless a public base URL is set.
   */
  static fromSettings(
    settings: {
      publicBaseUrl?: string;
      answerLinkKeys: readonly string[];
      answerLinkTtlSeconds: number;
    },
    tasks: Pick<TaskRepository, 'findForUser'>,
  ): EventAnswerLinks | undefined {
    if (!settings.publicBaseUrl || settings.answerLinkKeys.length === 0) return undefined;
    return new EventAnswerLinks(
      settings.answerLinkKeys,
      { publicBaseUrl: settings.publicBaseUrl, ttlSeconds: settings.answerLinkTtlSeconds },
      tasks,
    );
  }

  /** The link for this event, or null (another type, or nothing left to answer). */
  async forEvent(event: TaskEventRow): Promise<string | null> {
    if (event.type !== 'task.input_required') return null;
    const task = await this.tasks.findForUser(event.userId, event.taskId, event.threadId);
    return answerLinkFor(this.signer, this.options, task, event.createdAt);
  }
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(`${VERSION}.${payload}`).digest();
}

function parseGrant(payload: string): AnswerGrant | null {
  try {
    const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null) return null;
    const { t, k, e } = value as { t?: unknown; k?: unknown; e?: unknown };
    if (typeof t !== 'string' || typeof e !== 'number' || !Number.isSafeInteger(e)) return null;
    if (!Array.isArray(k) || k.length === 0) return null;
    const keys = (k as unknown[]).filter((key): key is string => typeof key === 'string');
    return keys.length === k.length ? { taskId: t, keys, expiresAt: e } : null;
  } catch {
    return null;
  }
}
