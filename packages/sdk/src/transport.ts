/**
 * How every call reaches the server: the url and the credential of the API it
 * goes to, the answer turned into a typed error (errors.ts), and a wait and a
 * retry on 429 as `Retry-After` says, when the request body can be resent.
 */
import type { CallOptions } from './call-options.js';
import type { PailOptions, RetryOptions } from './client-options.js';
import { BucketNotFoundError, errorFromResponse, FileNotFoundError, NotFoundError, PailError, RateLimitError } from './errors.js';
import { fetchFollowingRedirects } from './redirects.js';
import { IS_NODE, type PreparedBody } from './upload-body.js';

/**
 * Which API a request goes to, and so which credential it carries: the
 * Developer API with the key, the key routes or the account routes with the
 * session, or a signed url (an absolute `path`) with nothing.
 */
export type Api = 'buckets' | 'uploads' | 'audit' | 'keys' | 'auth' | 'signed-url';
const API_ROOT: Record<Exclude<Api, 'signed-url'>, string> = {
  buckets: '/api/v1/buckets',
  uploads: '/api/v1/uploads',
  audit: '/api/v1/audit',
  keys: '/api/keys',
  auth: '/api/auth',
};

export interface RequestSpec extends CallOptions {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under the API's root, or, for a signed url, the whole url. */
  path: string;
  /** Default: the Developer API. */
  api?: Api | undefined;
  query?: Record<string, string | number | undefined> | undefined;
  headers?: Record<string, string> | undefined;
  json?: unknown;
  /** The request body; see upload-body.ts. */
  body?: PreparedBody | undefined;
}

const DEFAULT_RETRY: Required<Omit<RetryOptions, 'onRetry'>> = { maxRetries: 3, maxDelaySeconds: 60 };

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    // Like fetch, reject with the signal's own reason (an AbortError DOMException unless the caller gave another).
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- see above
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- see above
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  private readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly sessionToken: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly retry: (Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>) | null;
  private readonly extraHeaders: Record<string, string>;

  constructor(options: PailOptions) {
    // The server's address; the Developer API's own base is accepted too.
    this.baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1\/buckets?$/, '');
    this.apiKey = options.apiKey;
    this.sessionToken = options.sessionToken;
    // Looked up at call time, so a fetch polyfilled later is still found.
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const retry = options.retryOn429;
    this.retry = retry ? { ...DEFAULT_RETRY, ...(retry === true ? {} : retry) } : null;
    this.extraHeaders = { ...options.headers };
  }

  /** The whole url of a path under an API's root. */
  apiUrl(api: Exclude<Api, 'signed-url'>, path: string): string {
    return `${this.baseUrl}${API_ROOT[api]}${path}`;
  }

  /** The headers of a Developer API request sent by other code (tus-js-client): the extra headers and the key. */
  keyHeaders(): Record<string, string> {
    const headers: Record<string, string> = { ...this.extraHeaders };
    if (this.apiKey !== undefined && this.apiKey !== '') headers['x-api-key'] = this.apiKey;
    return headers;
  }

  /** One call whose answer is JSON (or empty: undefined). */
  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send({ ...spec, headers: { accept: 'application/json', ...spec.headers } });
    const text = await response.text();
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new PailError(`Expected JSON from the server, got: ${text.slice(0, 200)}`, { status: response.status, body: text });
    }
  }

  /** One call: the request, retried on 429 when allowed; resolves only with a 2xx response. */
  async send(spec: RequestSpec): Promise<Response> {
    const api = spec.api ?? 'buckets';
    const url = api === 'signed-url' ? new URL(spec.path) : new URL(this.apiUrl(api, spec.path));
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { ...this.extraHeaders, ...spec.headers };
    if ((api === 'buckets' || api === 'uploads' || api === 'audit') && this.apiKey !== undefined && this.apiKey !== '') headers['x-api-key'] = this.apiKey;
    if ((api === 'keys' || api === 'auth') && this.sessionToken !== undefined && this.sessionToken !== '') {
      headers.authorization = `Bearer ${this.sessionToken}`;
    }

    for (let attempt = 0; ; attempt++) {
      const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers: { ...headers }, signal: spec.signal };
      let resendable = true;
      if (spec.json !== undefined) {
        init.body = JSON.stringify(spec.json);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      } else if (spec.body) {
        init.body = spec.body.open();
        resendable = spec.body.resendable;
        if (spec.body.streaming) init.duplex = 'half';
        if (spec.body.length !== undefined) (init.headers as Record<string, string>)['content-length'] = String(spec.body.length);
        // Node's fetch keeps every byte of a body it might have to resend after
        // a redirect, so a large upload would sit in memory: refuse redirects there.
        if (IS_NODE) init.redirect = 'error';
      }

      const response = await fetchFollowingRedirects(this.fetchImpl, this.baseUrl, url, init);
      if (response.ok) return response;

      // For a 404 without a code: on the Developer API, the file when the path names one, else the bucket.
      const fallback404 = api !== 'buckets' ? NotFoundError : spec.path.includes('/files/') ? FileNotFoundError : BucketNotFoundError;
      const error = await errorFromResponse(response, spec.method === 'HEAD' ? FileNotFoundError : fallback404);
      if (!(error instanceof RateLimitError) || !this.retry || !resendable || attempt >= this.retry.maxRetries) throw error;
      const delaySeconds = error.retryAfterSeconds ?? Math.min(2 ** attempt, this.retry.maxDelaySeconds);
      if (delaySeconds > this.retry.maxDelaySeconds) throw error;
      const delayMs = Math.round(delaySeconds * 1000);
      this.retry.onRetry?.({ attempt: attempt + 1, delayMs, error });
      await sleep(delayMs, spec.signal);
    }
  }
}
