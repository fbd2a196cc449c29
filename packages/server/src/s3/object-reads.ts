/**
 * GetObject and HeadObject, signed or anonymous: the same findReadable and
 * sendObject as the Pail API's downloads, plus the object's stored headers
 * (metadata.ts), S3's 412 preconditions, reads of one part by number and,
 * on signed requests only (as S3), the response-* header overrides.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ObjectRow } from '../db/schema.js';
import { isComposite } from '../domain/checksum-algorithms.js';
import { parsePartNumber } from '../domain/multipart.js';
import { MultipartRefused } from '../domain/multipart-refusals.js';
import { partRead } from '../domain/object-parts.js';
import { tagCount } from '../domain/object-tags.js';
import { expirationRules } from '../domain/lifecycle-expiry.js';
import { AppError } from '../domain/errors.js';
import { findReadable, type ReadableObject } from '../domain/objects.js';
import type { BucketRef } from '../domain/versions.js';
import { ANONYMOUS, type Principal } from '../domain/principal.js';
import { findReadableVersion, isWellFormedVersionId, latestDeleteMarkerAt, shownVersionId } from '../domain/versions.js';
import { lockOf } from '../domain/object-lock.js';
import { lockHeaders } from './object-lock.js';
import type { AppContext } from '../http/context.js';
import { sendObject } from '../http/downloads.js';
import { checkPreconditions } from './conditions.js';
import { expirationHeader } from './expiration.js';
import { S3Error, s3Errors } from './errors.js';
import type { S3Target } from './handler-support.js';
import { metadataHeaders } from './metadata.js';
import { RESPONSE_OVERRIDES, operationOf } from './operations.js';
import { queryValue, type QueryPairs } from './query.js';

export async function readObject(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, target: S3Target): Promise<FastifyReply> {
  // The caller's bucket by name and the object in one lookup, cached as the Pail API's reads are.
  const { principal } = target.caller;
  const bucketRef = { ownerName: { ownerId: principal.user.id, name: target.bucket } };
  const versionId = queryValue(target.query, 'versionId');
  const found: ReadableObject & { isLatest?: boolean } =
    versionId === undefined
      ? await currentOrMarker(ctx, bucketRef, target.key, principal)
      : await versionAsked(ctx, bucketRef, target.key, principal, versionId);
  checkPreconditions(request.headers, found.object);
  const part = await partAsked(ctx, request, target.query, found.object);
  // The stored headers, then what the request asks to override (response-content-type sets content-type, and so on).
  const headers: Record<string, string> = Object.assign(
    {},
    metadataHeaders(found.object),
    storedChecksumHeaders(request, target.query, found.object),
    taggingCountHeader(found.object),
  );
  // Expiration rules expire current versions only; a bucket without rules skips this.
  if (found.bucket.lifecycle_rules !== null && (versionId === undefined || found.isLatest === true)) Object.assign(headers, expiryHeader(found));
  if (found.bucket.versioning !== 'unversioned') headers['x-amz-version-id'] = shownVersionId(found.object.version_id);
  // Only a bucket made with object lock has locks to tell: others skip the lookup.
  if (found.bucket.object_lock === 1) Object.assign(headers, lockHeaders(await lockOf(ctx.db, found.object.storage_key)));
  if (part) Object.assign(headers, part.headers);
  for (const [name, value] of target.query) {
    if (name.startsWith('response-') && (RESPONSE_OVERRIDES as readonly string[]).includes(name)) headers[name.slice('response-'.length)] = value;
  }
  return sendObject(ctx.storage, request, reply, found, headers, part?.range);
}

/**
 * The object a request on a key names: the version `versionId` names, else
 * the current one, with S3's answers for a delete marker and a missing
 * version. GetObjectAttributes reads the same way.
 */
export async function objectAsked(
  ctx: AppContext,
  bucketRef: BucketRef,
  key: string,
  principal: Principal,
  versionId: string | undefined,
): Promise<ReadableObject> {
  return versionId === undefined ? currentOrMarker(ctx, bucketRef, key, principal) : versionAsked(ctx, bucketRef, key, principal, versionId);
}

/** The current version; when there is none and the latest is a delete marker, S3's 404 says so (x-amz-delete-marker). */
async function currentOrMarker(ctx: AppContext, bucketRef: BucketRef, key: string, principal: Principal): Promise<ReadableObject> {
  try {
    return await findReadable(ctx.storage, bucketRef, key, principal);
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'FileNotFound')) throw error;
    const marker = await latestDeleteMarkerAt(ctx.storage, bucketRef, key);
    if (!marker) throw new S3Error('NoSuchKey', 404, 'The specified key does not exist.', { 'x-amz-delete-marker': 'false' });
    throw new S3Error('NoSuchKey', 404, 'The specified key does not exist.', {
      'x-amz-delete-marker': 'true',
      'x-amz-version-id': shownVersionId(marker.versionId),
    });
  }
}

/** GetObject and HeadObject with ?versionId=: that version, or 405 for a delete marker, 404 NoSuchVersion, 400 for a malformed id. */
async function versionAsked(
  ctx: AppContext,
  bucketRef: BucketRef,
  key: string,
  principal: Principal,
  versionId: string,
): Promise<ReadableObject & { isLatest: boolean }> {
  if (!isWellFormedVersionId(versionId)) throw s3Errors.invalidArgument('Invalid version id specified');
  const found = await findReadableVersion(ctx.storage, bucketRef, key, principal, versionId);
  if ('deleteMarker' in found) {
    throw new S3Error('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.', {
      'x-amz-delete-marker': 'true',
      'x-amz-version-id': shownVersionId(found.deleteMarker.versionId),
      'last-modified': new Date(found.deleteMarker.lastModified).toUTCString(),
    });
  }
  return { bucket: found.bucket, object: found.object, isLatest: found.isLatest };
}

/**
 * The part `partNumber` names (domain/object-parts.ts): its bytes, sent as a
 * range (206) even when they are the whole object, as S3 sends them, and the
 * object's part count when it has parts Pail knows. A part it does not have
 * is 416 InvalidPartNumber; with a Range header too, 400.
 */
async function partAsked(
  ctx: Pick<AppContext, 'storage'>,
  request: FastifyRequest,
  query: QueryPairs,
  object: ObjectRow,
): Promise<{ range: { start: number; end: number } | null; headers: Record<string, string> } | undefined> {
  const raw = queryValue(query, 'partNumber');
  if (raw === undefined) return undefined;
  if (request.headers.range !== undefined) throw s3Errors.invalidRequest('Cannot specify both Range header and partNumber query parameter');
  let number: number;
  try {
    number = parsePartNumber(raw);
  } catch (error) {
    throw error instanceof MultipartRefused ? s3Errors.invalidArgument(error.message) : error;
  }
  const read = await partRead(ctx.storage, object, number);
  if (read === null) throw new S3Error('InvalidPartNumber', 416, 'The requested partnumber is not satisfiable');
  return { range: read.range, headers: read.count === undefined ? {} : { 'x-amz-mp-parts-count': String(read.count) } };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** x-amz-expiration when the bucket's lifecycle rules expire this (current) object; a bucket without rules does nothing more. */
const expiryHeader = ({ bucket, object }: ReadableObject): Readonly<Record<string, string>> =>
  bucket.lifecycle_rules === null
    ? NO_HEADERS
    : expirationHeader(expirationRules(bucket.lifecycle_rules), {
        filename: object.filename,
        size: object.size,
        tags: object.tags,
        lastModified: object.updated_at,
      });

/** x-amz-tagging-count, as S3 sends it: only when the object has tags. */
const taggingCountHeader = (object: ObjectRow): Readonly<Record<string, string>> =>
  object.tags === null ? NO_HEADERS : { 'x-amz-tagging-count': String(tagCount(object.tags)) };

/** x-amz-checksum-<algorithm> for each checksum given (S3 sends them on PutObject, and on reads when asked). */
export const checksumHeaders = (checksums: Record<string, string> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(checksums ?? {}).map(([algorithm, value]) => [`x-amz-checksum-${algorithm}`, value]));

/**
 * The object's stored full-object checksums, when the request asks with
 * x-amz-checksum-mode: ENABLED (header or query). Not for a range, whose
 * bytes the whole object's checksum does not describe (the SDK would
 * check them against it and fail), as S3 sends none then either; nor for
 * a part read by number.
 */
function storedChecksumHeaders(request: FastifyRequest, query: QueryPairs, object: ObjectRow): Record<string, string> {
  const mode = request.headers['x-amz-checksum-mode'] ?? query.find(([name]) => name === 'x-amz-checksum-mode')?.[1];
  if (object.checksums === null || mode !== 'ENABLED' || request.headers.range !== undefined) return NO_HEADERS;
  const checksums = JSON.parse(object.checksums) as Record<string, string>;
  const composite = Object.values(checksums).some(isComposite);
  return { ...checksumHeaders(checksums), 'x-amz-checksum-type': composite ? 'COMPOSITE' : 'FULL_OBJECT' };
}

/** A request with no signature at all: a public bucket's object, named by its storage_bucket_name (unique across owners). */
export const isUnsigned = (headers: FastifyRequest['headers'], query: QueryPairs): boolean =>
  headers.authorization === undefined && !query.some(([name]) => ['X-Amz-Signature', 'X-Amz-Algorithm', 'Signature', 'AWSAccessKeyId'].includes(name));

export async function readAnonymously(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  address: { bucket: string; key: string; query: QueryPairs },
): Promise<FastifyReply> {
  // Anonymous requests spend the per-IP budget, as public downloads of the Pail API do.
  await ctx.rateLimits.spendFor(ANONYMOUS, request.ip);
  if ((request.method !== 'GET' && request.method !== 'HEAD') || address.key === '') throw s3Errors.missingAuth();
  const operation = operationOf(request.method, address.bucket, address.key, address.query, request.headers);
  request.meteredAs = operation;
  if (operation !== 'GetObject' && operation !== 'HeadObject') throw s3Errors.missingAuth();
  if (address.query.some(([name]) => name.startsWith('response-'))) {
    throw new S3Error('InvalidRequest', 400, 'Request specific response headers cannot be used for anonymous GET requests.');
  }
  const found = await findReadable(ctx.storage, { storageName: address.bucket }, address.key, ANONYMOUS);
  checkPreconditions(request.headers, found.object);
  const part = await partAsked(ctx, request, address.query, found.object);
  const headers = {
    ...metadataHeaders(found.object),
    ...storedChecksumHeaders(request, address.query, found.object),
    ...taggingCountHeader(found.object),
    ...expiryHeader(found),
    ...part?.headers,
  };
  return sendObject(ctx.storage, request, reply, found, headers, part?.range);
}
