/**
 * A file's details (size, type, ETag, times, url, stored headers and user
 * metadata) and their edit, on both storage APIs. Details live at their own
 * path, `…/details/<filename>`, since `GET …/files/<filename>` is the file
 * itself; the edit is `PATCH …/files/<filename>` and answers the details.
 */
import { Data, EditFileBody, FileDetailsSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { getOwnBucket } from '../domain/buckets.js';
import { editObjectMetadata, fileDetails } from '../domain/object-metadata.js';
import { parseFilename, requireObject } from '../domain/objects.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, forApi, type Api, type Scope } from '../http/route.js';
import { contentTypeFor } from '../http/uploads.js';

const FileParams = Type.Object({ id: Type.String(), '*': Type.String({ description: 'The filename; a / in it as / or %2F' }) });

export function registerFileDetailRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const { db, storage } = ctx;
  const tag = API_TAGS[api];

  addRoute(scope, {
    operation: 'fileDetails',
    routes: forApi(api, {
      developer: ['GET /api/v1/buckets/:id/details/*', 'GET /api/v1/bucket/:id/details/*'],
      client: ['GET /api/buckets/:id/details/*'],
    }),
    tag,
    schema: { params: FileParams, response: { 200: Data(FileDetailsSchema) } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const object = await requireObject(storage, bucket, parseFilename(request.params['*']));
      return { data: fileDetails(storage.storageHost, bucket, object) };
    },
  });

  addRoute(scope, {
    operation: 'editFile',
    routes: forApi(api, {
      developer: ['PATCH /api/v1/buckets/:id/files/*', 'PATCH /api/v1/bucket/:id/files/*'],
      client: ['PATCH /api/buckets/:id/files/*'],
    }),
    tag,
    schema: { params: FileParams, body: EditFileBody, response: { 200: Data(FileDetailsSchema) } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const filename = parseFilename(request.params['*']);
      const edit = request.body;
      // The same check of a MIME type as an upload's Content-Type.
      const contentType = edit.content_type === undefined ? undefined : contentTypeFor(filename, edit.content_type);
      const details = await editObjectMetadata(storage, bucket, filename, { ...edit, ...(contentType ? { content_type: contentType } : {}) }, 'editFile');
      return { data: details };
    },
  });
}
