/**
 * `<public_url>/storage/<storage_bucket_name>/<filename>`: the `url` of every
 * object (a `/` in the name literal or `%2F`). Public buckets for anyone;
 * private ones with an API key or a session; and signed urls, which stand
 * for the key or session that made them: GET and HEAD to download, PUT to upload.
 */
import { Data, UploadResultSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { findReadable, parseFilename } from '../domain/objects.js';
import { bucketOfSignedUpload, readableBySignedUrl, signedUploadType } from '../domain/signed-urls.js';
import { uploadObject } from '../domain/uploads.js';
import { storageUrlAuth } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { sendObject } from '../http/downloads.js';
import { addRoute, type Scope } from '../http/route.js';
import { contentTypeFor, declaredLength } from '../http/uploads.js';

const StorageParams = Type.Object({ bucket: Type.String(), '*': Type.String({ description: 'The filename; a / in it as / or %2F' }) });

export function registerStorageUrlRoutes(app: Scope, ctx: AppContext): void {
  void app.register(async (scope: Scope) => {
    scope.addHook('onRequest', storageUrlAuth(ctx));
    addRoute(scope, {
      operation: 'readByUrl',
      routes: ['GET /storage/:bucket/*', 'HEAD /storage/:bucket/*'],
      tag: 'Storage URLs',
      schema: { params: StorageParams },
      config: { anonymousRead: true },
      handler: async (request, reply) => {
        const filename = parseFilename(request.params['*']);
        const { principal } = request;
        const found =
          principal.via === 'signed-url'
            ? await readableBySignedUrl(ctx.storage, principal)
            : await findReadable(ctx.storage, { storageName: request.params.bucket }, filename, principal);
        return sendObject(ctx.storage, request, reply, found);
      },
    });

    // A raw body must reach the handler as a stream: a child scope whose only body parser leaves it untouched.
    scope.register(async (raw: Scope) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser('*', (_request, _payload, done) => done(null));
      addRoute(raw, {
        operation: 'uploadBySignedUrl',
        routes: ['PUT /storage/:bucket/*'],
        tag: 'Storage URLs',
        schema: { params: StorageParams, response: { 201: Data(UploadResultSchema) } },
        handler: async (request, reply) => {
          const { principal } = request;
          // storageUrlAuth lets a PUT through only with a signed url.
          if (principal.via !== 'signed-url') throw new Error('storageUrlAuth let an unsigned upload through');
          const filename = parseFilename(principal.grant.filename);
          const bucket = await bucketOfSignedUpload(ctx.db, principal);
          const header = request.headers['content-type'];
          const result = await uploadObject(ctx.storage, {
            owner: principal.user,
            bucket,
            filename,
            body: request.raw,
            rawRequestBody: true,
            contentType: signedUploadType(principal.grant, header, contentTypeFor(filename, header)),
            declaredSize: declaredLength(request),
            maxBytes: principal.grant.maxBytes,
            operation: 'uploadBySignedUrl',
          });
          return reply.code(201).send({ data: result });
        },
      });
    });
  });
}
