/** What `new Pail(…)` accepts: where the server is, the credentials, and how calls are sent and retried. */
import type { RateLimitError } from './errors.js';

export interface RetryOptions {
  /** How many times to retry one call after a 429. Default 3. */
  maxRetries?: number;
  /**
   * The longest wait, in seconds, the client accepts. When the server asks
   * for a longer one, the RateLimitError is thrown at once instead. Default 60.
   */
  maxDelaySeconds?: number;
  /** Called before each wait; handy for logging. */
  onRetry?: (info: { attempt: number; delayMs: number; error: RateLimitError }) => void;
}

export interface PailOptions {
  /** Where the server is, e.g. `https://pail.example.com` (no `/api/v1`). */
  baseUrl: string;
  /** A Developer API key from the dashboard's SDK page. Optional only for downloads from public buckets. */
  apiKey?: string | undefined;
  /**
   * A session token (from `Pail.login`, or `POST /api/auth/login`), for
   * managing API keys: `listKeys`, `createKey`, `revokeKey`. The Developer API
   * calls never send it.
   */
  sessionToken?: string | undefined;
  /** A fetch to use instead of the global one (tests, proxies, older runtimes). */
  fetch?: typeof fetch;
  /** Retry calls refused with 429 after waiting `Retry-After`. Off by default; `true` means `{ maxRetries: 3 }`. */
  retryOn429?: boolean | RetryOptions;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}
