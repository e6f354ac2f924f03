import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import {
  API_KEY_REVOKED_CHANNEL,
  ApiKeyOwner,
  ApiKeyRepository,
  hashApiKey,
  ListenConnection,
} from '@app/persistence';

/** Keys remembered at most; past it the memory starts over (it only bounds misuse). */
const MAX_REMEMBERED = 10_000;

interface Remembered {
  owner: ApiKeyOwner;
  /** When the database said the key was valid (process clock, ms). */
  readAt: number;
}

/**
 * The owners of valid API keys, remembered so a busy client's every request does not read the
 * key again (docs/api.md, "API key cache"). Staleness is bounded two ways:
 * - A revoke through {@link ApiKeyRepository.revoke} notifies {@link API_KEY_REVOKED_CHANNEL}
 *   when it commits; every replica forgets that key when it hears it.
 * - Nothing is served from memory while this replica is not listening (before its first LISTEN,
 *   after a lost connection until it listens again), and no entry is older than
 *   API_KEY_CACHE_MS: that bounds a revoke the notification missed (SQL by hand).
 * Only valid keys are remembered: an unknown or revoked key is read every time.
 */
@Injectable()
export class ApiKeyCache implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly remembered = new Map<string, Remembered>();
  private readonly ttlMs: number;
  private unsubscribe?: () => Promise<void>;
  private listening = false;
  /**
   * Bumped by every notification and every loss of the listener: a read that began before a
   * bump may predate a revoke, so its answer is used once but not remembered.
   */
  private generation = 0;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly keys: ApiKeyRepository,
    private readonly connection: ListenConnection,
    private readonly log: PinoLogger,
  ) {
    this.ttlMs = settings.api.apiKeyCacheMs;
  }

  onApplicationBootstrap(): void {
    if (this.ttlMs === 0) return;
    this.unsubscribe = this.connection.subscribe(API_KEY_REVOKED_CHANNEL, {
      onNotify: (keyId) => this.forget(keyId),
      onListening: () => {
        this.listening = true;
      },
      onLost: (error, retryInMs) => {
        this.listening = false;
        this.forget(null);
        this.log.warn({ err: error, retryInMs }, 'API key revoke listener lost');
      },
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.listening = false;
    await this.unsubscribe?.();
  }

  /**
   * The owner of `key` if it is valid, from memory when allowed, else from the database.
   * `fresh` always reads the database (a long-lived stream re-checking its token).
   */
  async owner(key: string, fresh = false): Promise<ApiKeyOwner | null> {
    const keyHash = hashApiKey(key);
    if (!fresh && this.listening) {
      const known = this.remembered.get(keyHash);
      if (known && performance.now() - known.readAt < this.ttlMs) return known.owner;
    }
    const generation = this.generation;
    const listening = this.listening;
    const readAt = performance.now();
    const owner = await this.keys.findActiveByHash(keyHash);
    if (!owner) {
      this.remembered.delete(keyHash);
    } else if (listening && this.listening && generation === this.generation) {
      if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
      this.remembered.set(keyHash, { owner, readAt });
    }
    return owner;
  }

  /** Forgets the key with this ID, or every key (`null`: notifications may have been missed). */
  private forget(keyId: string | null): void {
    this.generation++;
    if (keyId === null) {
      this.remembered.clear();
      return;
    }
    for (const [keyHash, known] of this.remembered) {
      if (known.owner.id === keyId) this.remembered.delete(keyHash);
    }
  }
}
