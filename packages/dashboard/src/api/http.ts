/**
 * The one place the dashboard talks HTTP. Every call is same-origin with the
 * session cookie; error bodies are `{error, code?}` (decisions.md, "Errors").
 */
import type { ErrorBody } from '@pail/shared';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;

  constructor(status: number, message: string, code?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

type UnauthorizedListener = () => void;
let onUnauthorized: UnauthorizedListener | null = null;

/** The session provider registers here so that any 401 signs the user out. */
export function setUnauthorizedListener(listener: UnauthorizedListener | null): void {
  onUnauthorized = listener;
}

export function notifyUnauthorized(): void {
  onUnauthorized?.();
}

/** Reads `{error}` from a failed response, falling back to the status text. */
export function errorFromBody(status: number, body: unknown, fallback: string): ApiError {
  if (body && typeof body === 'object' && 'error' in body && typeof body.error === 'string') {
    const { error, code } = body as ErrorBody;
    return new ApiError(status, error, code);
  }
  return new ApiError(status, fallback || `Request failed (${status})`);
}

interface RequestOptions {
  method?: string;
  body?: unknown;
  signal?: AbortSignal;
  /** Auth endpoints expect 401 for wrong credentials: do not treat it as "signed out". */
  skipUnauthorizedHook?: boolean;
}

export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const init: RequestInit = {
    method: options.method ?? 'GET',
    credentials: 'same-origin',
    headers: { accept: 'application/json' },
    signal: options.signal ?? null,
  };
  if (options.body !== undefined) {
    init.headers = { ...init.headers, 'content-type': 'application/json' };
    init.body = JSON.stringify(options.body);
  }

  let response: Response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'Cannot reach the server. Check your connection and try again.');
  }

  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }

  if (!response.ok) {
    if (response.status === 401 && !options.skipUnauthorizedHook) notifyUnauthorized();
    throw errorFromBody(response.status, body, response.statusText);
  }
  return body as T;
}

/** `/api/buckets/3/files/a%20b.txt`: filenames are always percent-encoded in paths. */
export function fileApiPath(bucketId: number, filename: string): string {
  return `/api/buckets/${bucketId}/files/${encodeURIComponent(filename)}`;
}
