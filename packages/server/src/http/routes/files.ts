/** Files, on both storage APIs: the same handlers, each API with its own paths and auth (apis.ts). */
import { Data, ListFilesQuery, ListFilesResponseSchema, MessageSchema, UploadResultSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { getOwnBucket, ownBucketForUpload, parseBucketId } from '../../domain/buckets.js';
import { deleteObject, findReadable, listObjects, parseFilename } from '../../domain/objects.js';
import { uploadObject } from '../../domain/uploads.js';
import { signedIn } from '../auth.js';
import type { AppContext } from '../context.js';
import { sendObject } from '../downloads.js';
import { addRoute, API_TAGS, forApi, type Api, type Scope } from '../route.js';
import { contentTypeFor, declaredLength, partContentType, withMultipartFile } from '../uploads.js';
import { BucketParams } from './buckets.js';

const FileParams = Type.Object({ id: Type.String(), filename: Type.String() });

export function registerFileRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const { db, storage } = ctx;
  const tag = API_TAGS[api];

  addRoute(scope, {
    operation: 'listFiles',
    routes: forApi(api, {
      developer: ['GET /api/v1/buckets/:id/files', 'GET /api/v1/bucket/:id/files'],
      client: ['GET /api/buckets/:id/files', 'GET /api/buckets/:id/objects'],
    }),
    tag,
    schema: { params: BucketParams, querystring: ListFilesQuery, response: { 200: ListFilesResponseSchema } },
    handler: async (request, reply) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const page = await listObjects(storage, bucket, request.query);
      // `objects` repeats `data` (service.md): serialise the page once, not twice.
      const items = JSON.stringify(page.objects);
      const body = `{"data":${items},"objects":${items},"next_cursor":${JSON.stringify(page.nextCursor)}}`;
      return reply.serializer(() => body).send({ data: page.objects, objects: page.objects, next_cursor: page.nextCursor });
    },
  });

  addRoute(scope, {
    operation: 'uploadMultipart',
    routes: forApi(api, {
      developer: ['POST /api/v1/buckets/:id/files', 'POST /api/v1/bucket/:id/files'],
      client: ['POST /api/buckets/:id/files', 'POST /api/buckets/:id/upload'],
    }),
    tag,
    schema: { params: BucketParams, consumes: ['multipart/form-data'], response: { 201: Data(UploadResultSchema) } },
    handler: async (request, reply) => {
      const user = signedIn(request);
      const bucket = await ownBucketForUpload(storage, user.id, request.params.id);
      const result = await withMultipartFile(request, (file) => {
        const filename = parseFilename(file.filename ?? '');
        const contentType = partContentType(filename, file.mimetype);
        return uploadObject(storage, { owner: user, bucket, filename, body: file.stream, contentType });
      });
      return reply.code(201).send({ data: result });
    },
  });

  addRoute(scope, {
    operation: 'readFile',
    routes: forApi(api, {
      developer: [
        'GET /api/v1/buckets/:id/files/:filename',
        'HEAD /api/v1/buckets/:id/files/:filename',
        'GET /api/v1/bucket/:id/files/:filename',
        'HEAD /api/v1/bucket/:id/files/:filename',
      ],
      client: ['GET /api/buckets/:id/files/:filename', 'HEAD /api/buckets/:id/files/:filename'],
    }),
    tag,
    schema: { params: FileParams },
    config: { anonymousRead: true },
    handler: async (request, reply) => {
      const found = await findReadable(
        storage,
        { id: parseBucketId(request.params.id) },
        parseFilename(request.params.filename),
        request.principal.user?.id ?? null,
      );
      return sendObject(storage, request, reply, found);
    },
  });

  addRoute(scope, {
    operation: 'deleteFile',
    routes: forApi(api, {
      developer: [
        'DELETE /api/v1/buckets/:id/files/:filename',
        'DELETE /api/v1/bucket/:id/files/:filename',
        'DELETE /api/v1/buckets/:id/files/:filename/delete',
        'DELETE /api/v1/bucket/:id/files/:filename/delete',
      ],
      client: ['DELETE /api/buckets/:id/files/:filename'],
    }),
    tag,
    schema: { params: FileParams, response: { 200: MessageSchema } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      await deleteObject(storage, bucket, parseFilename(request.params.filename));
      return { message: 'File deleted successfully' };
    },
  });

  // A raw body must reach the handler as a stream, so this route lives in a
  // child scope whose only body parser leaves the body untouched.
  scope.register(async (raw: Scope) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_request, _payload, done) => done(null));
    addRoute(raw, {
      operation: 'uploadRaw',
      routes: forApi(api, {
        developer: ['PUT /api/v1/buckets/:id/files/:filename', 'PUT /api/v1/bucket/:id/files/:filename'],
        client: ['PUT /api/buckets/:id/files/:filename'],
      }),
      tag,
      schema: { params: FileParams, response: { 201: Data(UploadResultSchema) } },
      handler: async (request, reply) => {
        const user = signedIn(request);
        const bucket = await ownBucketForUpload(storage, user.id, request.params.id);
        const filename = parseFilename(request.params.filename);
        const result = await uploadObject(storage, {
          owner: user,
          bucket,
          filename,
          body: request.raw,
          rawRequestBody: true,
          contentType: contentTypeFor(filename, request.headers['content-type']),
          declaredSize: declaredLength(request),
        });
        return reply.code(201).send({ data: result });
      },
    });
  });
}
