/**
 * Which bucket and key a request names: path style (`/bucket/key`) always,
 * and virtual-hosted style (`bucket.<S3_API_DOMAIN>` as Host, the whole path
 * being the key) when a domain is configured. The signature covers the path
 * as sent, so this only decides what the request is about.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { decodePath } from './query.js';

export function addressOf(path: string, headers: IncomingHttpHeaders, domain: string | null): { bucket: string; key: string } {
  const segments = decodePath(path);
  const host = (headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  if (domain !== null && host.endsWith(`.${domain}`)) {
    const bucket = host.slice(0, -(domain.length + 1));
    // The key may hold slashes of its own: everything after the leading slash.
    return { bucket, key: segments.slice(1).join('/') };
  }
  const [, bucket = '', ...keyParts] = segments;
  return { bucket, key: keyParts.join('/') };
}
