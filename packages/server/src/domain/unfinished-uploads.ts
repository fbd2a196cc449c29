/**
 * Unfinished uploads, listed and cancelled by their owner (decisions.md,
 * "Plans, storage caps, rate limits"): resumable (tus) uploads in progress and
 * S3 multipart uploads, each with the bytes it holds against the cap. A key
 * limited to some buckets sees and cancels only those buckets' uploads
 * (authorize.ts, which also names the permissions: listing reads, cancelling
 * writes, as ListMultipartUploads and AbortMultipartUpload do).
 * Cancelling ends an upload the way its own door does: a resumable one as a
 * tus termination, a multipart one as an abort, so its bytes are deleted only
 * once its removal is durable.
 */
import type { UnfinishedUpload, UnfinishedUploadKind } from '@pail/shared';
import { multipartUploadsOf, resumableUploadsOf, type UnfinishedMultipartRow, type UnfinishedResumableRow } from '../db/repositories/unfinished-uploads.js';
import type { Db } from '../db/schema.js';
import { allows, bucketScope } from './authorize.js';
import { errors } from './errors.js';
import { abortUpload } from './multipart.js';
import { MultipartRefused } from './multipart-refusals.js';
import type { StoragePorts } from './ports.js';
import type { AccountPrincipal } from './principal.js';
import { endResumableUpload } from './resumable-uploads.js';

const resumableView = (row: UnfinishedResumableRow): UnfinishedUpload => ({
  id: row.id,
  kind: 'resumable',
  bucket_id: row.bucket_id,
  bucket_name: row.bucket_name,
  filename: row.filename,
  content_type: row.content_type,
  held_bytes: row.length,
  received_bytes: row.received,
  length: row.length,
  offset: row.received,
  parts: null,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const multipartView = (row: UnfinishedMultipartRow): UnfinishedUpload => ({
  id: row.id,
  kind: 'multipart',
  bucket_id: row.bucket_id,
  bucket_name: row.bucket_name,
  filename: row.filename,
  content_type: row.content_type,
  held_bytes: row.bytes,
  received_bytes: row.bytes,
  length: null,
  offset: null,
  parts: row.parts,
  created_at: row.created_at,
  updated_at: row.last_part_at ?? row.created_at,
});

/** The owner's unfinished uploads the principal may see (of one bucket, with `bucketId`), newest first, and what they hold together. */
export async function listUnfinishedUploads(
  db: Db,
  principal: AccountPrincipal,
  bucketId?: number,
): Promise<{ uploads: UnfinishedUpload[]; heldBytes: number }> {
  const owner = principal.user;
  let buckets = bucketScope(principal);
  if (bucketId !== undefined) buckets = allows(principal, 'listUploads', { id: bucketId }) ? [bucketId] : [];
  const [resumable, multipart] = await Promise.all([resumableUploadsOf(db, owner.id, buckets), multipartUploadsOf(db, owner.id, buckets)]);
  const uploads = [...resumable.map(resumableView), ...multipart.map(multipartView)].sort((a, b) =>
    a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? -1 : 1,
  );
  return { uploads, heldBytes: uploads.reduce((sum, upload) => sum + upload.held_bytes, 0) };
}

/**
 * Ends one of the owner's unfinished uploads without a file; NotFound for anyone else's, one the principal may not see, or one that ended.
 * `operation`: the door's name for the request, for whoever hears of the end (object-events.ts).
 */
export async function cancelUnfinishedUpload(
  ports: StoragePorts,
  principal: AccountPrincipal,
  kind: UnfinishedUploadKind,
  id: string,
  operation?: string,
): Promise<UnfinishedUpload> {
  const owner = principal.user;
  const buckets = bucketScope(principal);
  if (kind === 'resumable') {
    const [row] = await resumableUploadsOf(ports.db, owner.id, buckets, id);
    if (!row || !(await endResumableUpload(ports, row.id, { outcome: 'aborted', operation: operation ?? null }))) throw errors.uploadNotFound();
    return resumableView(row);
  }
  const [row] = await multipartUploadsOf(ports.db, owner.id, buckets, id);
  if (!row) throw errors.uploadNotFound();
  try {
    await abortUpload(ports, { id: row.bucket_id, owner_id: owner.id, storage_name: row.storage_name }, row.id, operation);
  } catch (error) {
    // Completed or aborted since it was read.
    if (error instanceof MultipartRefused) throw errors.uploadNotFound();
    throw error;
  }
  return multipartView(row);
}
