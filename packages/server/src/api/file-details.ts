/**
 * A file's details (size, type, ETag, times, url, stored headers and user
 * metadata) and their edit, on both storage APIs. Details live at their own
 * path, `…/details/<filename>`, since `GET …/files/<filename>` is the file
 * itself; the edit is `PATCH …/files/<filename>` and answers the details.
 */
import { actorOf } from '../domain/audit.js';
import { Data, EditFileBody, FileDetailsSchema, FileLockSchema, SetLegalHoldBody, SetRetentionBody } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { getOwnBucket } from '../domain/buckets.js';
import { editObjectMetadata, fileDetailsOf } from '../domain/object-metadata.js';
import { parseFilename, requireObject } from '../domain/objects.js';
import { lockedVersion, setLegalHold, setRetention } from '../domain/lock-changes.js';
import { mayBypassGovernance } from '../domain/authorize.js';
import { fileLockView } from '../domain/object-lock.js';
import { errors } from '../domain/errors.js';
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
      return { data: await fileDetailsOf(storage, bucket, object) };
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

  // A version's lock (object lock) at paths of their own, as the details: PUT …/files/<filename> is an upload.
  const VersionQuery = Type.Object({ version_id: Type.Optional(Type.String({ description: "The version; absent: the file's current one" })) });
  addRoute(scope, {
    operation: 'setRetention',
    routes: forApi(api, {
      developer: ['PUT /api/v1/buckets/:id/retention/*', 'PUT /api/v1/bucket/:id/retention/*'],
      client: ['PUT /api/buckets/:id/retention/*'],
    }),
    tag,
    schema: { params: FileParams, querystring: VersionQuery, body: SetRetentionBody, response: { 200: Data(FileLockSchema) } },
    handler: async (request) => {
      const { principal } = request;
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const version = await lockedVersion(storage, bucket, parseFilename(request.params['*']), request.query.version_id);
      const { mode, retain_until: until, bypass_governance: bypass } = request.body;
      if ((mode === null) !== (until === null)) throw errors.validation('mode and retain_until are both given, or both null (to remove it)');
      const retention = mode === null || until === null ? null : { mode, retainUntil: until };
      return {
        data: fileLockView(await setRetention(storage, bucket, version, retention, mayBypassGovernance(principal, bypass === true), actorOf(principal))),
      };
    },
  });

  addRoute(scope, {
    operation: 'setLegalHold',
    routes: forApi(api, {
      developer: ['PUT /api/v1/buckets/:id/legal-hold/*', 'PUT /api/v1/bucket/:id/legal-hold/*'],
      client: ['PUT /api/buckets/:id/legal-hold/*'],
    }),
    tag,
    schema: { params: FileParams, querystring: VersionQuery, body: SetLegalHoldBody, response: { 200: Data(FileLockSchema) } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const version = await lockedVersion(storage, bucket, parseFilename(request.params['*']), request.query.version_id);
      return { data: fileLockView(await setLegalHold(storage, bucket, version, request.body.legal_hold, actorOf(request.principal))) };
    },
  });
}
