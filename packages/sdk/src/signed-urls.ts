/**
 * Options for making a signed url, and how they become the JSON body of
 * `POST …/files/<filename>/signed-url` (decisions.md, "Signed urls").
 */
import type { CallOptions } from './call-options.js';

export interface SignedUrlOptions extends CallOptions {
  /** `GET` (default): the url downloads the file, which must exist. `PUT`: the url uploads it. */
  method?: 'GET' | 'PUT' | undefined;
  /** Seconds the url works, 1 to 604800 (7 days). Server default 3600. */
  expiresIn?: number | undefined;
  /** PUT only: the Content-Type the upload must have (an upload without one gets this type). */
  contentType?: string | undefined;
  /** PUT only: the largest upload the url accepts, in bytes. */
  maxBytes?: number | undefined;
}

export function signedUrlBody(options: SignedUrlOptions): Record<string, unknown> {
  const { method, expiresIn, contentType, maxBytes } = options;
  const body: Record<string, unknown> = {};
  if (method !== undefined) body.method = method;
  if (expiresIn !== undefined) body.expires_in = expiresIn;
  if (contentType !== undefined) body.content_type = contentType;
  if (maxBytes !== undefined) body.max_bytes = maxBytes;
  return body;
}
