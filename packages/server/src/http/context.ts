/** What the HTTP layer hands to routes, and what it adds to Fastify's types. */
import type { AccountRow } from '../db/schema.js';
import type { KeyLimits } from '../domain/key-limits.js';
import type { Grant } from '../domain/signed-urls.js';
import type { Services } from '../services.js';
import type { OperationName } from './operations.js';

export type AppContext = Services;

/** Who is calling. `via` says which credential proved it. */
export type Principal =
  | { via: 'api-key'; user: AccountRow; keyId: number; limits: KeyLimits }
  | { via: 'session-cookie' | 'session-token'; user: AccountRow; sessionId: string }
  /** A signed url: what its signer (a key or a session) granted, checked again on every use. */
  | { via: 'signed-url'; user: AccountRow; limits: KeyLimits; grant: Grant }
  | { via: 'anonymous'; user: null };

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    /** The error code the request was answered with (error-handler.ts), for metrics; null when it succeeded. */
    errorCode: string | null;
    /** The operation a request counts as in metrics when one route serves many (the S3 listener's); null: its route's. */
    meteredAs: string | null;
  }
  interface FastifyContextConfig {
    /** The operation's name (operations.ts), for logs, metrics and rate limits. */
    operation?: OperationName;
    /** GET/HEAD of a file: allowed without credentials when the bucket is public. */
    anonymousRead?: boolean;
    /** A request that spends no rate budget: a resumable upload's PATCH (the upload spent one when it was created). */
    unmetered?: boolean;
  }
  interface FastifyInstance {
    /** The app's services, for the CLI and tests. */
    pail: AppContext;
  }
}
