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
  /** Sent as is instead of a JSON `body` (a raw-body upload, e.g. an empty folder marker). */
  rawBody?: string | Blob;
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
  } else if (options.rawBody !== undefined) {
    init.body = options.rawBody;
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

/**
 * `/api/buckets/3/files/photos%2Fa%20b.txt`: the whole filename percent-encoded,
 * its slashes too. The server takes `%2F` and `/` alike, and a fully encoded
 * name can never be mistaken for a route suffix such as `/signed-url`.
 */
export function fileApiPath(bucketId: number, filename: string): string {
  return `/api/buckets/${bucketId}/files/${encodeURIComponent(filename)}`;
}

/** Words the server reads after a filename as an operation on the file (`…/files/a/tags` is the tags of `a`). */
const OPERATION_WORDS = new Set(['delete', 'tags', 'versions', 'restore']);

/**
 * `/api/buckets/3/files/photos/a%20b.txt`: each folder segment encoded, with
 * literal slashes between them, as uploads into a folder are sent. A folder
 * marker (`photos/`) keeps its trailing slash. A name whose last segment is an
 * operation's word (`notes/tags`) goes whole-encoded, so it stays a name.
 */
export function filePathWithFolders(bucketId: number, filename: string): string {
  const segments = filename.split('/');
  if (segments.length > 1 && OPERATION_WORDS.has(segments[segments.length - 1] ?? '')) return fileApiPath(bucketId, filename);
  return `/api/buckets/${bucketId}/files/${segments.map(encodeURIComponent).join('/')}`;
}
