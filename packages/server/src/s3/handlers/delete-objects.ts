/**
 * DeleteObjects (POST /bucket?delete): up to 1000 keys, each deleted through
 * the domain's deleteObject as DeleteObject does, each answered on its own
 * (Deleted, or Error with S3's code). A key that is not there counts as
 * deleted, as S3 does; a VersionId deletes that version for good. The body is read as XML whatever its Content-Type
 * (botocore sends none).
 */
import { isUnfitText } from '@pail/shared';
import { AppError } from '../../domain/errors.js';
import { deleteObject } from '../../domain/objects.js';
import { deleteFileVersion } from '../../domain/versions.js';
import { fromAppError, s3Errors } from '../errors.js';
import { bypassAsked } from '../object-lock.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { xmlBody, type XmlBodyLimits } from '../payload.js';
import { field, parseXml, type XmlElement } from '../xml.js';

const MAX_KEYS = 1000;
/** 1000 keys of up to 1024 bytes (some escaped), each Object of at most 6 elements (Key, VersionId, ETag, LastModifiedTime, Size). */
const DELETE_BODY: XmlBodyLimits = { maxBytes: MAX_KEYS * 2048 + 1024, maxTags: MAX_KEYS * 12 + 64 };

/** The keys (and any version ids) asked for, and whether the answer is to be quiet. */
function parseDelete(body: string): { quiet: boolean; objects: { key: string; versionId: string | undefined }[] } {
  const root = field(parseXml(body, { trim: false }), 'Delete');
  if (root === undefined) throw s3Errors.malformedXml();
  const listed = field(root, 'Object');
  const items = listed === undefined ? [] : Array.isArray(listed) ? (listed as unknown[]) : [listed];
  if (items.length === 0 || items.length > MAX_KEYS) throw s3Errors.malformedXml();
  const objects = items.map((item) => {
    const key = field(item, 'Key');
    if (typeof key !== 'string' || key === '') throw s3Errors.malformedXml();
    // As a key in the url (addressing.ts): no control character, which no filename holds and PostgreSQL refuses.
    if (isUnfitText(key)) throw s3Errors.invalidArgument('Object key must not contain control characters');
    const versionId = field(item, 'VersionId');
    if (versionId !== undefined && typeof versionId !== 'string') throw s3Errors.malformedXml();
    return { key, versionId };
  });
  const quiet = field(root, 'Quiet');
  return { quiet: typeof quiet === 'string' && quiet.trim().toLowerCase() === 'true', objects };
}

export const DeleteObjects: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  // xmlBody checks Content-MD5 (which S3 requires here) or the flexible checksum SDKs send instead, when present.
  const body = await xmlBody(request, target.caller.payloadHash, target.caller, DELETE_BODY);
  const { quiet, objects } = parseDelete(body);
  const deleted: XmlElement[] = [];
  const failed: XmlElement[] = [];
  const bypass = bypassAsked(request, target.caller.principal);
  for (const { key, versionId } of objects) {
    try {
      // With a versionId, that version for good (a locked one is refused: object-lock.ts); without, as DeleteObject.
      if (versionId !== undefined) {
        const removed = await deleteFileVersion(ctx.storage, bucket, key, versionId, 'DeleteObjects', { bypassGovernance: bypass });
        if (!quiet)
          deleted.push({ Key: key, VersionId: versionId, ...(removed.isDeleteMarker ? { DeleteMarker: true, DeleteMarkerVersionId: versionId } : {}) });
        continue;
      }
      const outcome = await deleteObject(ctx.storage, bucket, key, 'DeleteObjects', {
        by: target.caller.principal,
        evenIfAbsent: bucket.versioning !== 'unversioned',
        bypassGovernance: bypass,
      });
      if (!quiet) {
        deleted.push(outcome.markerVersionId === null ? { Key: key } : { Key: key, DeleteMarker: true, DeleteMarkerVersionId: outcome.markerVersionId });
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // A key or version that is not there is deleted already, as S3 answers it.
      if (error.code === 'FileNotFound' || error.code === 'VersionNotFound') {
        if (!quiet) deleted.push(versionId === undefined ? { Key: key } : { Key: key, VersionId: versionId });
        continue;
      }
      const s3Error = fromAppError(error);
      failed.push({ Key: key, ...(versionId !== undefined ? { VersionId: versionId } : {}), Code: s3Error.code, Message: s3Error.message });
    }
  }
  return sendXml(reply, 'DeleteResult', { Deleted: deleted, Error: failed });
};
