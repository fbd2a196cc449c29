/**
 * What every S3 handler shares: the request it was routed as, how an answer
 * in XML is sent, and the caller's own bucket by name. Kept apart from the
 * handler tables so the per-resource files can use it without importing each
 * other.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BucketRow, NamedBucket } from '../db/schema.js';
import { getOwnBucketByName, ownNamedBucket } from '../domain/buckets.js';
import { shownVersionId } from '../domain/version-ids.js';
import type { AppContext } from '../http/context.js';
import type { S3Caller } from './auth.js';
import { checkObjectAcl } from './object-acl.js';
import { S3_ACTION, type S3Operation } from './operations.js';
import type { QueryPairs } from './query.js';
import { xmlDocument, type XmlElement } from './xml.js';

export interface S3Target {
  operation: S3Operation;
  bucket: string;
  key: string;
  query: QueryPairs;
  caller: S3Caller;
}

export type Handler = (ctx: AppContext, request: FastifyRequest, reply: FastifyReply, target: S3Target) => Promise<FastifyReply>;

export const sendXml = (reply: FastifyReply, root: string, content: XmlElement | string): FastifyReply =>
  reply.code(200).header('content-type', 'application/xml').send(xmlDocument(root, content));

export const ownBucket = (ctx: AppContext, target: S3Target): Promise<BucketRow> =>
  getOwnBucketByName(ctx.db, target.caller.principal, target.bucket, S3_ACTION[target.operation]);

/** S3's Owner element: buckets here belong to the caller, named by user id and email as ListBuckets does. */
export const ownerXml = (caller: S3Caller): XmlElement => ({ ID: String(caller.principal.user.id), DisplayName: caller.principal.user.email });

/**
 * The caller's bucket for a new object (PutObject, CopyObject, CreateMultipartUpload), refusing an `x-amz-acl` the object
 * could not have (object-acl.ts). Cached by name (domain/buckets.ts ownNamedBucket): the commit checks it is still there.
 */
export async function ownBucketForNewObject(ctx: AppContext, target: S3Target, request: FastifyRequest): Promise<NamedBucket> {
  const bucket = await ownNamedBucket(ctx.storage, target.caller.principal, target.bucket, S3_ACTION[target.operation]);
  checkObjectAcl(request.headers['x-amz-acl'], bucket.public === 1);
  return bucket;
}

/** x-amz-version-id on an answer about one version (its tags, say), as S3 sends it: only in a bucket that has been versioned. */
export function versionIdHeader(reply: FastifyReply, bucket: Pick<BucketRow, 'versioning'>, versionId: string | null): FastifyReply {
  return bucket.versioning === 'unversioned' ? reply : reply.header('x-amz-version-id', shownVersionId(versionId));
}
