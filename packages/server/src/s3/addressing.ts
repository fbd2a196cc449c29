/**
 * Which bucket and key a request names: path style (`/bucket/key`) always,
 * and virtual-hosted style (`bucket.<S3_API_DOMAIN>` as Host, the whole path
 * being the key) when a domain is configured. The signature covers the path
 * as sent, so this only decides what the request is about.
 */
import { isUnfitText } from '@pail/shared';
import type { IncomingHttpHeaders } from 'node:http';
import { s3Errors } from './errors.js';
import { decodePath } from './query.js';

/**
 * The bucket and key; a key that is not text (bytes that are not UTF-8, a
 * malformed escape) or holds control characters is 400 InvalidURI, as S3
 * answers a key it cannot parse, whatever the operation.
 */
export function addressOf(path: string, headers: IncomingHttpHeaders, domain: string | null): { bucket: string; key: string } {
  const segments = decodePath(path);
  const hostBucket = virtualHostBucket(headers, domain);
  const virtual = hostBucket !== null;
  // The key may hold slashes of its own: everything after the bucket (virtual-hosted: after the leading slash).
  const keyFrom = virtual ? 1 : 2;
  const bucket = hostBucket ?? segments[1] ?? '';
  const key = segments.slice(keyFrom).join('/');
  if (key !== '' && !parsableKey(path.split('/').slice(keyFrom).join('/'), key)) throw s3Errors.invalidUri();
  return { bucket, key };
}

/** The bucket a virtual-hosted-style Host names (`<bucket>.<domain>`), or null for path style. */
export function virtualHostBucket(headers: IncomingHttpHeaders, domain: string | null): string | null {
  const host = (headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  return domain !== null && host.endsWith(`.${domain}`) ? host.slice(0, -(domain.length + 1)) : null;
}

function parsableKey(encoded: string, key: string): boolean {
  try {
    decodeURIComponent(encoded);
  } catch {
    return false;
  }
  return !isUnfitText(key);
}
