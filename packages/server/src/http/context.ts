/** What the HTTP layer hands to routes: the ports, built once in app.ts. */
import type { BlobStore } from '../blob/blob-store.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Dialect } from '../db/migrations.js';
import type { UserRow } from '../db/schema.js';
import type { ApiKeyAuthenticator } from '../domain/api-keys.js';
import type { ObjectPorts } from '../domain/objects.js';
import type { SessionTokens } from '../domain/sessions.js';
import type { RateLimits } from './rate-limits.js';

export interface AppContext {
  config: Config;
  db: Db;
  dialect: Dialect;
  blobs: BlobStore;
  objects: ObjectPorts;
  tokens: SessionTokens;
  apiKeys: ApiKeyAuthenticator;
  rateLimits: RateLimits;
}

/** Who is calling. `via` says which credential proved it. */
export type Principal =
  | { via: 'api-key'; user: UserRow; keyId: number }
  | { via: 'session-cookie' | 'session-token'; user: UserRow; sessionId: string }
  | { via: 'anonymous'; user: null };

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** GET/HEAD of a file: allowed without credentials when the bucket is public. */
    anonymousRead?: boolean;
  }
}
