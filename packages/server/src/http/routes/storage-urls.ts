/**
 * `<public_url>/storage/<storage_bucket_name>/<filename>`: the `url` of every
 * object. Public buckets for anyone; private ones with an API key or a session.
 */
import { Type } from '@sinclair/typebox';
import { findReadable, parseFilename } from '../../domain/objects.js';
import { optionalAnyAuth } from '../auth.js';
import type { AppContext } from '../context.js';
import { sendObject } from '../downloads.js';
import { addRoute, type Scope } from '../route.js';

export function registerStorageUrlRoutes(app: Scope, ctx: AppContext): void {
  void app.register(async (scope: Scope) => {
    scope.addHook('onRequest', optionalAnyAuth(ctx));
    addRoute(scope, {
      operation: 'readByUrl',
      routes: ['GET /storage/:bucket/:filename', 'HEAD /storage/:bucket/:filename'],
      tag: 'Storage URLs',
      schema: { params: Type.Object({ bucket: Type.String(), filename: Type.String() }) },
      config: { anonymousRead: true },
      handler: async (request, reply) => {
        const filename = parseFilename(request.params.filename);
        const found = await findReadable(ctx.storage, { storageName: request.params.bucket }, filename, request.principal.user?.id ?? null);
        return sendObject(ctx.storage, request, reply, found);
      },
    });
  });
}
