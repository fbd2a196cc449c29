/**
 * Sending a file: the headers decisions.md lists, conditional requests (304),
 * single ranges (206/416), and the bytes from the small-object cache or a
 * stream from the blob store. A multi-range request gets the whole file (200),
 * which RFC 9110 allows.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import parseRange from 'range-parser';
import type { ObjectRow } from '../db/schema.js';
import { errors } from '../domain/errors.js';
import { objectBody } from '../domain/object-bytes.js';
import type { ReadableObject } from '../domain/objects.js';
import type { StoragePorts } from '../domain/ports.js';
import { readableByAnyone, type PublicReadFacts } from '../domain/public-access.js';

/**
 * Headers depend only on the object row and whether anyone may read it
 * (domain/public-access.ts). Cached rows are shared objects, so their
 * headers are built once, not per request.
 */
const headerCache = new WeakMap<ObjectRow, { isPublic: boolean; headers: Record<string, string>; withoutCacheControl: Record<string, string> }>();

/** `withoutCacheControl`: the S3 API's, which sends Cache-Control only when the object has one (or the request asks). */
export function objectHeaders(bucket: PublicReadFacts, object: ObjectRow, withoutCacheControl = false): Record<string, string> {
  const isPublic = readableByAnyone(bucket);
  let cached = headerCache.get(object);
  if (!cached || cached.isPublic !== isPublic) {
    const headers = buildHeaders(isPublic, object);
    const { 'cache-control': _cacheControl, ...rest } = headers;
    cached = { isPublic, headers, withoutCacheControl: rest };
    headerCache.set(object, cached);
  }
  return withoutCacheControl ? cached.withoutCacheControl : cached.headers;
}

function buildHeaders(isPublic: boolean, object: ObjectRow): Record<string, string> {
  return {
    'content-type': object.content_type,
    etag: `"${object.etag}"`,
    'last-modified': new Date(object.updated_at).toUTCString(),
    'accept-ranges': 'bytes',
    'cache-control': isPublic ? 'public, no-cache' : 'private, no-cache',
    // Uploaded HTML must not run as this origin (where the dashboard's session lives).
    'content-security-policy': 'sandbox',
    'x-content-type-options': 'nosniff',
  };
}

function notModified(request: FastifyRequest, object: ObjectRow): boolean {
  const etag = `"${object.etag}"`;
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
  }
  const ifModifiedSince = request.headers['if-modified-since'];
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    // HTTP dates have whole seconds.
    const modified = Math.floor(Date.parse(object.updated_at) / 1000) * 1000;
    return !Number.isNaN(since) && modified <= since;
  }
  return false;
}

/** The one range to serve, null for the whole file. Throws 416 when unsatisfiable. */
function requestedRange(request: FastifyRequest, object: ObjectRow): { start: number; end: number } | null {
  const header = request.headers.range;
  if (header === undefined) return null;
  const ifRange = request.headers['if-range']?.toString();
  if (ifRange !== undefined && ifRange.trim() !== `"${object.etag}"`) {
    const date = Date.parse(ifRange);
    if (Number.isNaN(date) || Math.floor(Date.parse(object.updated_at) / 1000) * 1000 > date) return null;
  }
  const ranges = parseRange(object.size, header, { combine: true });
  if (ranges === -1) throw errors.rangeNotSatisfiable(object.size);
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return null;
  const [range] = ranges;
  return range ? { start: range.start, end: range.end } : null;
}

export async function sendObject(
  ports: Pick<StoragePorts, 'writes' | 'blobs' | 'caches'>,
  request: FastifyRequest,
  reply: FastifyReply,
  { bucket, object }: ReadableObject,
  /**
   * The S3 API's headers over the usual ones (stored metadata, response-*
   * overrides). S3 sends Cache-Control only when the object has one (or the
   * request asks), so with these Pail's default Cache-Control is left out.
   */
  s3Headers?: Record<string, string>,
  /** The bytes to send in place of the Range header's (an S3 part read by number); null: the whole file. */
  chosenRange?: { start: number; end: number } | null,
): Promise<FastifyReply> {
  // (Pail's Cache-Control is left out for the S3 API rather than removed: a removed header slows every later one.)
  reply.headers(objectHeaders(bucket, object, s3Headers !== undefined));
  if (s3Headers) reply.headers(s3Headers);
  if (notModified(request, object)) return reply.code(304).send();
  const range = chosenRange === undefined ? requestedRange(request, object) : chosenRange;
  const length = range ? range.end - range.start + 1 : object.size;
  if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${object.size}`);
  reply.header('content-length', String(length));
  if (request.method === 'HEAD') return reply.send();
  return reply.send(await objectBody(ports, object, range));
}
