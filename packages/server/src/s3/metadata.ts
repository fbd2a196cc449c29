/**
 * What S3 keeps with an object beside its type: Content-Disposition,
 * Content-Encoding, Content-Language, Cache-Control, Expires and x-amz-meta-*
 * user metadata, read from a PutObject's headers and sent back on GET and
 * HEAD. The size rule is the domain's (domain/object-metadata.ts), shared with the Pail API's edit.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ObjectRow } from '../db/schema.js';
import { MAX_METADATA_BYTES, metadataBytes, STORED_HEADERS, USER_METADATA_PREFIX } from '../domain/object-metadata.js';
import { S3Error } from './errors.js';

const KEPT: readonly string[] = STORED_HEADERS;

/** The headers to keep, or undefined for none; 400 MetadataTooLarge past 2 KiB. */
export function metadataOf(headers: IncomingHttpHeaders): Record<string, string> | undefined {
  let kept: Record<string, string> | undefined;
  for (const name of Object.keys(headers)) {
    const userMetadata = name.startsWith(USER_METADATA_PREFIX);
    if (!(userMetadata || KEPT.includes(name))) continue;
    const raw = headers[name];
    if (raw === undefined) continue;
    const value = textOf(Array.isArray(raw) ? raw.join(',') : raw);
    const stored = name === 'content-encoding' ? storedEncoding(value) : value;
    // User metadata keeps an empty value (S3 returns it); an empty standard header is as good as none.
    if (stored !== '' || userMetadata) (kept ??= {})[name] = stored;
  }
  if (kept === undefined) return undefined;
  if (metadataBytes(kept) > MAX_METADATA_BYTES) {
    throw new S3Error('MetadataTooLarge', 400, `Your metadata headers exceed the maximum allowed metadata size (${MAX_METADATA_BYTES} bytes).`);
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A header value as text: Node reads its bytes one per character, and the bytes of a UTF-8 client are UTF-8. */
function textOf(value: string): string {
  if (!/[\u0080-\uffff]/.test(value)) return value;
  try {
    return utf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value; // not UTF-8: latin1 it was
  }
}

/**
 * A stored value as a header: a character past U+00FF cannot be sent as one
 * byte, so such a value goes out RFC 2047 encoded (=?UTF-8?B?…?=), as S3
 * sends non-ASCII metadata; the rest byte for byte, as it came.
 */
const headerOf = (value: string): string => (/[\u0100-\uffff]/.test(value) ? `=?UTF-8?B?${Buffer.from(value).toString('base64')}?=` : value);

/**
 * Content-Encoding without aws-chunked, which is how the body was framed on
 * the wire, not how the stored bytes are encoded; the rest kept as sent
 * (`deflate, gzip` stays `deflate, gzip`).
 */
function storedEncoding(value: string): string {
  return value
    .split(',')
    .filter((token) => token.trim().toLowerCase() !== 'aws-chunked')
    .join(',')
    .trim()
    .replace(/^,\s*|,\s*$/g, '');
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Rows are shared (cached) objects: their parsed headers are kept beside them. */
const parsed = new WeakMap<ObjectRow, Record<string, string>>();

/** The stored headers as kept (a copy keeps its source's). */
export const storedMetadata = (object: ObjectRow): Record<string, string> | undefined =>
  object.metadata === null ? undefined : (JSON.parse(object.metadata) as Record<string, string>);

/** The stored headers to send with the object (none for files uploaded through the Pail API). */
export function metadataHeaders(object: ObjectRow): Record<string, string> {
  if (object.metadata === null) return NO_HEADERS;
  let headers = parsed.get(object);
  if (headers === undefined) {
    headers = Object.fromEntries(Object.entries(storedMetadata(object)!).map(([name, value]) => [name, headerOf(value)]));
    parsed.set(object, headers);
  }
  return headers;
}
