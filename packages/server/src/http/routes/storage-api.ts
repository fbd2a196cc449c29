/**
 * The bucket and file operations, written once and mounted by both APIs. An
 * API differs only in its auth hook (set on the scope by the caller), its base
 * paths and its aliases; the handlers, schemas and bodies are the same.
 */
import {
  BucketObjectSchema,
  CreateBucketBody,
  Data,
  ListFilesQuery,
  MessageSchema,
  StorageBucketSchema,
  UploadResultSchema,
  VisibilityBody,
} from '@pail/shared';
import type {} from '@fastify/swagger';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { deleteBucket } from '../../domain/bucket-deletion.js';
import { bucketView, createBucket, getOwnBucket, listBuckets, ownBucketForUpload, parseBucketId, setVisibility } from '../../domain/buckets.js';
import { errors } from '../../domain/errors.js';
import { deleteObject, findReadable, listObjects, parseFilename, uploadObject } from '../../domain/objects.js';
import type { AppContext, Principal } from '../context.js';
import { sendObject } from '../downloads.js';
import { contentTypeFor, declaredLength, withMultipartFile } from '../uploads.js';

export interface ApiLayout {
  tag: string;
  /** Every base path the API answers on, e.g. `/api/v1/buckets` and `/api/v1/bucket`. */
  bases: string[];
  /** Extra paths, relative to each base, for operations that have aliases. */
  aliases: Partial<Record<'listBuckets' | 'createBucket' | 'deleteBucket' | 'listFiles' | 'uploadMultipart' | 'deleteFile', string[]>>;
  visibilityMethods: HTTPMethods[];
}

const BucketParams = Type.Object({ id: Type.String() });
const FileParams = Type.Object({ id: Type.String(), filename: Type.String() });
type BucketReq = FastifyRequest<{ Params: { id: string } }>;
type FileReq = FastifyRequest<{ Params: { id: string; filename: string } }>;

const ListBucketsResponse = Type.Object({ data: Type.Array(StorageBucketSchema), buckets: Type.Array(StorageBucketSchema) });
const ListFilesResponse = Type.Object({
  data: Type.Array(BucketObjectSchema),
  objects: Type.Array(BucketObjectSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

function signedIn(principal: Principal) {
  if (principal.user === null) throw errors.unauthorized();
  return principal.user;
}

export function registerStorageApi(scope: FastifyInstance, ctx: AppContext, layout: ApiLayout): void {
  const { db, objects } = ctx;
  const tags = [layout.tag];

  const ops = {
    async listBuckets(request: FastifyRequest) {
      const buckets = await listBuckets(db, signedIn(request.principal).id);
      return { data: buckets, buckets };
    },
    async createBucket(request: FastifyRequest<{ Body: Record<string, unknown> }>, reply: FastifyReply) {
      const bucket = await createBucket(db, signedIn(request.principal).id, request.body);
      return reply.code(201).send({ data: bucket });
    },
    async getBucket(request: BucketReq) {
      const bucket = await getOwnBucket(db, signedIn(request.principal).id, request.params.id);
      return { data: bucketView(bucket) };
    },
    async deleteBucket(request: BucketReq) {
      const user = signedIn(request.principal);
      const id = parseBucketId(request.params.id);
      if (id === null) throw errors.bucketNotFound();
      await deleteBucket(objects, user.id, id);
      return { message: 'Bucket deleted successfully' };
    },
    async setVisibility(request: FastifyRequest<{ Params: { id: string }; Body: Record<string, unknown> }>) {
      await setVisibility(objects, signedIn(request.principal).id, request.params.id, request.body ?? {});
      return { message: 'Visibility updated' };
    },
    async listFiles(request: FastifyRequest<{ Params: { id: string }; Querystring: { prefix?: string; limit?: string; cursor?: string } }>, reply: FastifyReply) {
      const bucket = await getOwnBucket(db, signedIn(request.principal).id, request.params.id);
      const page = await listObjects(objects, bucket, request.query);
      // `objects` repeats `data` (service.md): serialise the page once, not twice.
      const items = JSON.stringify(page.objects);
      return reply
        .type('application/json; charset=utf-8')
        .send(`{"data":${items},"objects":${items},"next_cursor":${JSON.stringify(page.nextCursor)}}`);
    },
    async uploadMultipart(request: BucketReq, reply: FastifyReply) {
      const user = signedIn(request.principal);
      const bucket = await ownBucketForUpload(objects, user.id, request.params.id);
      const result = await withMultipartFile(request, (file) => {
        const filename = parseFilename(file.filename ?? '');
        const contentType = contentTypeFor(filename, file.mimetype, true);
        return uploadObject(objects, { owner: user, bucket, filename, body: file.stream, contentType });
      });
      return reply.code(201).send({ data: result });
    },
    async uploadRaw(request: FileReq, reply: FastifyReply) {
      const user = signedIn(request.principal);
      const bucket = await ownBucketForUpload(objects, user.id, request.params.id);
      const filename = parseFilename(request.params.filename);
      const contentType = contentTypeFor(filename, request.headers['content-type']);
      const result = await uploadObject(objects, {
        owner: user,
        bucket,
        filename,
        body: request.raw,
        rawRequestBody: true,
        contentType,
        declaredSize: declaredLength(request),
      });
      return reply.code(201).send({ data: result });
    },
    async readFile(request: FileReq, reply: FastifyReply) {
      const id = parseBucketId(request.params.id);
      if (id === null) throw errors.bucketNotFound();
      const filename = parseFilename(request.params.filename);
      const found = await findReadable(objects, { id }, filename, request.principal.user?.id ?? null);
      return sendObject(objects, request, reply, found.bucket, found.object);
    },
    async deleteFile(request: FileReq) {
      const bucket = await getOwnBucket(db, signedIn(request.principal).id, request.params.id);
      await deleteObject(objects, bucket, parseFilename(request.params.filename));
      return { message: 'File deleted successfully' };
    },
  };

  const message = { 200: MessageSchema };
  for (const base of layout.bases) {
    const at = (paths: string[] | undefined, main: string) => [main, ...(paths ?? [])].map((p) => base + p);
    const route = (method: HTTPMethods | HTTPMethods[], urls: string[], summary: string, schema: object, handler: (req: any, reply: FastifyReply) => unknown, config = {}) => {
      for (const url of urls) {
        scope.route({ method, url, schema: { tags, summary, ...schema }, config, handler: handler as never });
      }
    };

    route('GET', at(layout.aliases.listBuckets, ''), 'List buckets', { response: { 200: ListBucketsResponse } }, ops.listBuckets);
    route('POST', at(layout.aliases.createBucket, ''), 'Create a bucket', { body: CreateBucketBody, response: { 201: Data(StorageBucketSchema) } }, ops.createBucket);
    route('GET', at([], '/:id'), 'Get a bucket', { params: BucketParams, response: { 200: Data(StorageBucketSchema) } }, ops.getBucket);
    route('DELETE', at(layout.aliases.deleteBucket, '/:id'), 'Delete a bucket and all its files', { params: BucketParams, response: message }, ops.deleteBucket);
    route(layout.visibilityMethods, at([], '/:id/visibility'), 'Make a bucket public or private', { params: BucketParams, body: VisibilityBody, response: message }, ops.setVisibility);
    route('GET', at(layout.aliases.listFiles, '/:id/files'), 'List files (ascending by name, paged)', { params: BucketParams, querystring: ListFilesQuery, response: { 200: ListFilesResponse } }, ops.listFiles);
    route('POST', at(layout.aliases.uploadMultipart, '/:id/files'), "Upload a file (multipart, part named 'file')", { params: BucketParams, consumes: ['multipart/form-data'], response: { 201: Data(UploadResultSchema) } }, ops.uploadMultipart);
    route('GET', at([], '/:id/files/:filename'), 'Download a file', { params: FileParams }, ops.readFile, { anonymousRead: true });
    route('HEAD', at([], '/:id/files/:filename'), "Get a file's metadata", { params: FileParams }, ops.readFile, { anonymousRead: true });
    route('DELETE', at(layout.aliases.deleteFile, '/:id/files/:filename'), 'Delete a file', { params: FileParams, response: message }, ops.deleteFile);

    // A raw body must reach the handler as a stream, so this route lives in a
    // child scope whose only body parser leaves the body untouched.
    scope.register(async (raw) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser('*', (_request, _payload, done) => done(null));
      raw.route({
        method: 'PUT',
        url: `${base}/:id/files/:filename`,
        schema: { tags, summary: 'Upload a file (raw body; Content-Type sets its type)', params: FileParams, response: { 201: Data(UploadResultSchema) } },
        handler: ops.uploadRaw as never,
      });
    });
  }
}
