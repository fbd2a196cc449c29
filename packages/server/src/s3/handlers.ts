/**
 * The S3 operations of this slice, each a thin translation onto the same
 * domain functions the Pail API uses (buckets, listObjects, uploadObject,
 * findReadable, deleteObject): one set of rules, two protocols.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { deleteBucket } from '../domain/bucket-deletion.js';
import { createBucket, getOwnBucketByName, listBuckets } from '../domain/buckets.js';
import { AppError } from '../domain/errors.js';
import { mayUseBucket, requireMayCreateBuckets } from '../domain/key-limits.js';
import { deleteObject, findReadable, listObjectRowsPage, MAX_PAGE_SIZE, parseFilename } from '../domain/objects.js';
import { uploadObject } from '../domain/uploads.js';
import type { AppContext } from '../http/context.js';
import { sendObject } from '../http/downloads.js';
import { contentTypeFor, declaredLength } from '../http/uploads.js';
import type { S3Caller } from './auth.js';
import { S3Error, s3Errors } from './errors.js';
import type { S3Operation } from './operations.js';
import { bodyStream, smallXmlBody } from './payload.js';
import { queryValue, strictEncode, type QueryPairs } from './query.js';
import { xmlDocument, type XmlElement } from './xml.js';

export interface S3Target {
  operation: S3Operation;
  bucket: string;
  key: string;
  query: QueryPairs;
  caller: S3Caller;
}

type Handler = (ctx: AppContext, request: FastifyRequest, reply: FastifyReply, target: S3Target) => Promise<FastifyReply>;

const sendXml = (reply: FastifyReply, root: string, content: XmlElement | string) =>
  reply.code(200).header('content-type', 'application/xml').send(xmlDocument(root, content));

const ownBucket = (ctx: AppContext, target: S3Target) => getOwnBucketByName(ctx.db, target.caller.owner.user.id, target.bucket, target.caller.owner.limits);

export const HANDLERS: Record<S3Operation, Handler> = {
  async ListBuckets(ctx, _request, reply, { caller }) {
    const buckets = (await listBuckets(ctx.db, caller.owner.user.id)).filter((bucket) => mayUseBucket(caller.owner.limits, bucket.id));
    return sendXml(reply, 'ListAllMyBucketsResult', {
      Owner: { ID: String(caller.owner.user.id), DisplayName: caller.owner.user.email },
      Buckets: { Bucket: buckets.map((bucket) => ({ Name: bucket.name, CreationDate: bucket.created_at })) },
    });
  },

  async CreateBucket(ctx, request, reply, { bucket, caller }) {
    requireMayCreateBuckets(caller.owner.limits);
    const acl = request.headers['x-amz-acl'];
    if (acl !== undefined && acl !== 'private' && acl !== 'public-read') throw s3Errors.notImplemented(`x-amz-acl: ${String(acl)}`);
    // The body may be a CreateBucketConfiguration naming a region; every region is this one, so it is read and let go.
    await smallXmlBody(request, caller.claimed.payloadHash);
    try {
      await createBucket(ctx.db, caller.owner.user.id, { name: bucket, public: acl === 'public-read' }, ctx.config.maxBucketsPerUser);
    } catch (error) {
      if (error instanceof AppError && error.code === 'ValidationError') throw new S3Error('InvalidBucketName', 400, error.message);
      throw error;
    }
    return reply.code(200).header('location', `/${bucket}`).send();
  },

  async HeadBucket(ctx, _request, reply, target) {
    await ownBucket(ctx, target);
    return reply.code(200).header('x-amz-bucket-region', ctx.config.s3ApiRegion).send();
  },

  async DeleteBucket(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    // S3 deletes only empty buckets (the Pail API deletes a bucket with its files).
    if (bucket.object_count > 0) throw s3Errors.bucketNotEmpty();
    await deleteBucket(ctx.storage, target.caller.owner.user.id, String(bucket.id));
    return reply.code(204).send();
  },

  async GetBucketLocation(ctx, _request, reply, target) {
    await ownBucket(ctx, target);
    return sendXml(reply, 'LocationConstraint', ctx.config.s3ApiRegion);
  },

  async ListObjectsV2(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    const param = (name: string) => queryValue(target.query, name);
    const prefix = param('prefix') ?? '';
    const delimiter = param('delimiter') || undefined;
    const token = param('continuation-token') || undefined;
    const startAfter = param('start-after') || undefined;
    const encodingType = param('encoding-type') || undefined;
    if (encodingType !== undefined && encodingType !== 'url') throw s3Errors.invalidArgument('Invalid Encoding Method specified in Request');
    const rawMaxKeys = param('max-keys') ?? String(MAX_PAGE_SIZE);
    if (!/^\d{1,9}$/.test(rawMaxKeys)) throw s3Errors.invalidArgument('max-keys must be a whole number');
    // S3 answers at most 1000 keys a page whatever max-keys asks for.
    const maxKeys = Math.min(Number(rawMaxKeys), MAX_PAGE_SIZE);
    const page =
      maxKeys === 0
        ? { rows: [], folders: [], nextCursor: null }
        : await listObjectRowsPage(ctx.storage, bucket, { prefix, delimiter, limit: String(maxKeys), cursor: token, after: startAfter });
    const encode = encodingType === 'url' ? (text: string) => text.split('/').map(strictEncode).join('/') : (text: string) => text;
    const result: XmlElement = { Name: target.bucket, Prefix: encode(prefix) };
    if (delimiter !== undefined) result.Delimiter = encode(delimiter);
    Object.assign(result, { MaxKeys: maxKeys, KeyCount: page.rows.length + page.folders.length, IsTruncated: page.nextCursor !== null });
    if (encodingType !== undefined) result.EncodingType = encodingType;
    if (token !== undefined) result.ContinuationToken = token;
    if (page.nextCursor !== null) result.NextContinuationToken = page.nextCursor;
    if (startAfter !== undefined) result.StartAfter = encode(startAfter);
    result.Contents = page.rows.map((row) => ({
      Key: encode(row.filename),
      LastModified: row.updated_at,
      ETag: `"${row.etag}"`,
      Size: row.size,
      StorageClass: 'STANDARD',
    }));
    result.CommonPrefixes = page.folders.map((folder) => ({ Prefix: encode(folder) }));
    return sendXml(reply, 'ListBucketResult', result);
  },

  async PutObject(ctx, request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    const filename = parseFilename(target.key);
    const declaredSize = declaredLength(request);
    if (declaredSize === undefined) throw s3Errors.missingContentLength();
    if (/aws-chunked/i.test(String(request.headers['content-encoding'] ?? ''))) throw s3Errors.notImplemented('Content-Encoding: aws-chunked');
    const body = bodyStream(request, target.caller.claimed.payloadHash);
    const result = await uploadObject(ctx.storage, {
      owner: target.caller.owner.user,
      bucket: { id: bucket.id, owner_id: bucket.owner_id, storage_name: bucket.storage_name },
      filename,
      body: body.stream,
      contentType: contentTypeFor(filename, request.headers['content-type']),
      declaredSize,
      rawRequestBody: body.raw,
    });
    return reply.code(200).header('x-pail-size', String(result.size)).send();
  },

  GetObject: readObject,
  HeadObject: readObject,

  async DeleteObject(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    try {
      await deleteObject(ctx.storage, bucket, target.key);
    } catch (error) {
      // S3 answers 204 for a key that is not there: deleting is idempotent.
      if (!(error instanceof AppError && error.code === 'FileNotFound')) throw error;
    }
    return reply.code(204).send();
  },
};

async function readObject(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, target: S3Target): Promise<FastifyReply> {
  const bucket = await ownBucket(ctx, target);
  const found = await findReadable(ctx.storage, { id: bucket.id }, target.key, target.caller.owner.user.id, target.caller.owner.limits);
  return sendObject(ctx.storage, request, reply, found);
}
