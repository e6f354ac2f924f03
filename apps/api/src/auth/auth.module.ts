import { Module } from '@nestjs/common';
import { ApiKeyCache } from './api-key-cache';
import { TokenVerifier } from './token-verifier.service';

/**
 * Who a bearer token is (an API key by its hash, a JWT by its signature): one TokenVerifier and
 * one key cache per process, with its revoke listener, shared by the global AuthGuard, the
 * submit fast path, the `/mcp` request guard and the console's sign-in. The guards that run on
 * every route are registered by ApiModule, where their order is visible.
 */
@Module({
  providers: [ApiKeyCache, TokenVerifier],
  exports: [TokenVerifier],
})
export class AuthModule {}
