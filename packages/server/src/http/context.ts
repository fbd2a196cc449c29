/** What the HTTP layer hands to routes, and what it adds to Fastify's types. */
import type { Principal } from '../domain/principal.js';
import type { Services } from '../services.js';
import type { OperationName } from './operations.js';

export type AppContext = Services;

export type { Principal };

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling (domain/principal.ts), set by the auth hook of the route's scope. */
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
