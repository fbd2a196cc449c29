/**
 * What the two copies (CopyObject, UploadPartCopy) share: the source named
 * by x-amz-copy-source, and its bytes' MD5 taken as they pass (the copy's
 * S3 ETag).
 */
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { sourceThrough } from '../blob/joined-streams.js';
import type { ObjectRow } from '../db/schema.js';
import { findReadable } from '../domain/objects.js';
import type { Principal } from '../domain/principal.js';
import { findReadableVersion, isWellFormedVersionId, shownVersionId } from '../domain/versions.js';
import type { AppContext } from '../http/context.js';
import { s3Errors } from './errors.js';

/** x-amz-copy-source: `[/]bucket/key[?versionId=<id>]`, the key URL-encoded. */
export function parseCopySource(raw: string | string[] | undefined): { bucket: string; key: string; versionId?: string } {
  const value = Array.isArray(raw) ? raw[0] : raw;
  const invalid = () => s3Errors.invalidArgument('x-amz-copy-source must be /bucket/key, URL-encoded');
  if (value === undefined) throw invalid();
  const [path = '', query] = value.split('?', 2);
  let versionId: string | undefined;
  if (query !== undefined && query !== '') {
    const badVersion = () => s3Errors.invalidArgument('Invalid version id specified');
    if (!query.startsWith('versionId=')) throw badVersion();
    try {
      versionId = decodeURIComponent(query.slice('versionId='.length));
    } catch {
      // `%` not followed by two hex digits (URIError) was a 500.
      throw badVersion();
    }
    if (!isWellFormedVersionId(versionId)) throw badVersion();
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(path.startsWith('/') ? path.slice(1) : path);
  } catch {
    throw invalid();
  }
  const slash = decoded.indexOf('/');
  if (slash <= 0 || slash === decoded.length - 1) throw invalid();
  return { bucket: decoded.slice(0, slash), key: decoded.slice(slash + 1), ...(versionId !== undefined ? { versionId } : {}) };
}

/**
 * The copy's source: its current version, or the version the source names
 * (a delete marker cannot be copied: 400, as S3), and the header the answer
 * carries for it in a versioned bucket (x-amz-copy-source-version-id).
 */
export async function copySourceObject(
  ctx: AppContext,
  sourceBucketId: number,
  from: { key: string; versionId?: string },
  principal: Principal,
): Promise<{ object: ObjectRow; headers: Record<string, string> }> {
  if (from.versionId === undefined) {
    const found = await findReadable(ctx.storage, { id: sourceBucketId }, from.key, principal);
    const versioned = found.bucket.versioning !== 'unversioned';
    return { object: found.object, headers: versioned ? { 'x-amz-copy-source-version-id': shownVersionId(found.object.version_id) } : {} };
  }
  const found = await findReadableVersion(ctx.storage, { id: sourceBucketId }, from.key, principal, from.versionId);
  if ('deleteMarker' in found) throw s3Errors.invalidRequest('The source of a copy request may not specifically refer to a delete marker by version id.');
  return { object: found.object, headers: { 'x-amz-copy-source-version-id': from.versionId } };
}

/** The bytes as they pass to the upload, with their MD5 taken on the way (the copy's S3 ETag). */
export function md5Passing(body: Buffer | Readable): { stream: Readable; md5Hex: () => string } {
  const md5 = createHash('md5');
  let hex: string | undefined;
  const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      md5.update(chunk);
      done(null, chunk);
    },
  });
  // An upload refused before it read every byte (over the cap) must not leave the store's stream open.
  return { stream: sourceThrough(source, tap), md5Hex: () => (hex ??= md5.digest('hex')) };
}
