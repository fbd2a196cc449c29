/**
 * Files, on both storage APIs: the same handlers, each API with its own paths
 * and auth (storage-apis.ts). A filename is the whole rest of the path after
 * `/files/`, so a name with folders may come with literal slashes or `%2F`.
 */
import {
  Data,
  DeleteFileQuery,
  DeleteFolderResultSchema,
  ListFilesQuery,
  ListFilesResponseSchema,
  MessageSchema,
  MoveBody,
  MoveResultSchema,
  RestoreBody,
  SignedUrlBody,
  SignedUrlSchema,
  UploadResultSchema,
  ReadFileQuery,
} from '@pail/shared';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { getOwnBucket, ownBucketForUpload, parseBucketId } from '../domain/buckets.js';
import { baseName, deleteObject, findReadable, listObjects, parseFilename } from '../domain/objects.js';
import { deleteFolder } from '../domain/folder-deletion.js';
import { mayBypassGovernance } from '../domain/authorize.js';
import { moveFiles } from '../domain/moves.js';
import { signFileUrl } from '../domain/signed-urls.js';
import { uploadObject } from '../domain/uploads.js';
import { errors } from '../domain/errors.js';
import { accountOf, signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { sendObject } from '../http/downloads.js';
import { addRoute, API_TAGS, BucketParams, forApi, type Api, type Scope } from '../http/route.js';
import { deleteVersion, restore, sendVersion, sendVersions } from './versions.js';
import { contentTypeFor, declaredLength, partContentType, withMultipartFile } from '../http/uploads.js';

const FileParams = Type.Object({ id: Type.String(), '*': Type.String({ description: 'The filename; a / in it as / or %2F' }) });
const FolderParams = Type.Object({ id: Type.String(), '*': Type.String({ description: 'The folder, e.g. photos/2026/ (the last / may be left out)' }) });

/** The path after `/files/` as the client sent it, still percent-encoded (a `%2F` is not a `/` here). */
function rawFilePath(request: FastifyRequest): string {
  const path = request.url.split('?', 1)[0]!;
  return path.slice(path.indexOf('/files/') + '/files/'.length);
}

/**
 * The name a route with a suffix (`…/delete`, `…/signed-url`) acts on: the
 * decoded path without the suffix when the path ends in it literally, else
 * null. A name whose last segment is the suffix word sends that slash as `%2F`.
 */
function nameBeforeSuffix(request: FastifyRequest & { params: { '*': string } }, suffix: string): string | null {
  const raw = rawFilePath(request);
  if (!raw.endsWith(`/${suffix}`)) return null;
  return request.params['*'].slice(0, -(suffix.length + 1));
}

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
      const body = `{"data":${items},"objects":${items},"folders":${JSON.stringify(page.folders)},"next_cursor":${JSON.stringify(page.nextCursor)}}`;
      return reply.serializer(() => body).send({ data: page.objects, objects: page.objects, folders: page.folders, next_cursor: page.nextCursor });
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
        const filename = parseFilename(baseName(file.filename ?? ''));
        const contentType = partContentType(filename, file.mimetype);
        return uploadObject(storage, { owner: user, bucket, filename, body: file.stream, contentType, beforeCommit: file.rest, operation: 'uploadMultipart' });
      });
      return reply.code(201).send({ data: result });
    },
  });

  addRoute(scope, {
    operation: 'readFile',
    routes: forApi(api, {
      developer: ['GET /api/v1/buckets/:id/files/*', 'HEAD /api/v1/buckets/:id/files/*', 'GET /api/v1/bucket/:id/files/*', 'HEAD /api/v1/bucket/:id/files/*'],
      client: ['GET /api/buckets/:id/files/*', 'HEAD /api/buckets/:id/files/*'],
    }),
    tag,
    schema: { params: FileParams, querystring: ReadFileQuery },
    config: { anonymousRead: true },
    handler: async (request, reply) => {
      const versionsOf = nameBeforeSuffix(request, 'versions');
      if (versionsOf !== null) return reply.send(await sendVersions(ctx, request, request.params.id, parseFilename(versionsOf), request.query));
      const versionId = request.query.version_id;
      if (versionId !== undefined) return sendVersion(ctx, request, reply, request.params.id, parseFilename(request.params['*']), versionId);
      const found = await findReadable(storage, { id: parseBucketId(request.params.id) }, parseFilename(request.params['*']), request.principal);
      return sendObject(storage, request, reply, found);
    },
  });

  addRoute(scope, {
    operation: 'deleteFile',
    routes: forApi(api, {
      // On the Developer API, a path ending in a literal `/delete` is service.md's delete alias (`…/files/a/b/delete` deletes `a/b`).
      developer: ['DELETE /api/v1/buckets/:id/files/*', 'DELETE /api/v1/bucket/:id/files/*'],
      client: ['DELETE /api/buckets/:id/files/*'],
    }),
    tag,
    schema: { params: FileParams, querystring: DeleteFileQuery, response: { 200: MessageSchema } },
    handler: async (request) => {
      const aliased = api === 'developer' ? nameBeforeSuffix(request, 'delete') : null;
      const filename = parseFilename(aliased ?? request.params['*']);
      // ?bypass_governance=true is the Pail API's x-amz-bypass-governance-retention: the same permission decides (object-lock.ts).
      const bypassGovernance = mayBypassGovernance(request.principal, request.query.bypass_governance === 'true');
      if (request.query.version_id !== undefined) {
        await deleteVersion(ctx, request, request.params.id, filename, request.query.version_id, bypassGovernance);
        return { message: 'Version deleted for good' };
      }
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      // In a versioned bucket this adds a delete marker: the file stays restorable (…/versions, …/trash).
      await deleteObject(storage, bucket, filename, 'deleteFile', { by: request.principal, bypassGovernance });
      return { message: 'File deleted successfully' };
    },
  });

  addRoute(scope, {
    operation: 'moveFiles',
    routes: forApi(api, {
      developer: ['POST /api/v1/buckets/:id/move', 'POST /api/v1/bucket/:id/move'],
      client: ['POST /api/buckets/:id/move'],
    }),
    tag,
    schema: { params: BucketParams, body: MoveBody, response: { 200: Data(MoveResultSchema) } },
    handler: async (request) => ({ data: await moveFiles(storage, accountOf(request), request.params.id, request.body, 'moveFiles') }),
  });

  addRoute(scope, {
    operation: 'deleteFolder',
    routes: forApi(api, {
      developer: ['DELETE /api/v1/buckets/:id/folders/*', 'DELETE /api/v1/bucket/:id/folders/*'],
      client: ['DELETE /api/buckets/:id/folders/*'],
    }),
    tag,
    schema: { params: FolderParams, response: { 200: Data(DeleteFolderResultSchema) } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      return { data: await deleteFolder(storage, bucket, request.params['*'], 'deleteFolder') };
    },
  });

  addRoute(scope, {
    operation: 'signUrl',
    routes: forApi(api, {
      developer: ['POST /api/v1/buckets/:id/files/*', 'POST /api/v1/bucket/:id/files/*'],
      client: ['POST /api/buckets/:id/files/*'],
    }),
    tag,
    schema: {
      description:
        'POST …/files/<filename>/signed-url; POST …/files/<filename>/restore {version_id} (versioned buckets: a copy of that version becomes the current one)',
      params: FileParams,
      body: Type.Optional(Type.Union([SignedUrlBody, RestoreBody])),
      response: { 201: Data(Type.Union([SignedUrlSchema, UploadResultSchema])) },
    },
    handler: async (request, reply) => {
      const restoring = nameBeforeSuffix(request, 'restore');
      if (restoring !== null) {
        return reply.code(201).send({ data: await restore(ctx, request, request.params.id, parseFilename(restoring), request.body) });
      }
      const name = nameBeforeSuffix(request, 'signed-url');
      if (name === null) throw errors.notFound();
      const signed = await signFileUrl(
        { db, signer: ctx.urlSigner, baseUrl: `${ctx.config.publicUrl}/storage`, clock: ctx.storage.clock },
        request.principal,
        request.params.id,
        parseFilename(name),
        (request.body ?? {}) as Static<typeof SignedUrlBody>,
      );
      return reply.code(201).send({ data: signed });
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
        developer: ['PUT /api/v1/buckets/:id/files/*', 'PUT /api/v1/bucket/:id/files/*'],
        client: ['PUT /api/buckets/:id/files/*'],
      }),
      tag,
      schema: { params: FileParams, response: { 201: Data(UploadResultSchema) } },
      handler: async (request, reply) => {
        const user = signedIn(request);
        const bucket = await ownBucketForUpload(storage, user.id, request.params.id);
        const filename = parseFilename(request.params['*']);
        const result = await uploadObject(storage, {
          owner: user,
          bucket,
          filename,
          body: request.raw,
          rawRequestBody: true,
          contentType: contentTypeFor(filename, request.headers['content-type']),
          declaredSize: declaredLength(request),
          operation: 'uploadRaw',
        });
        return reply.code(201).send({ data: result });
      },
    });
  });
}
