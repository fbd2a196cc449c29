/**
 * `<public_url>/storage/<storage_bucket_name>/<filename>`: the `url` of every
 * object. Public buckets for anyone; private ones with an API key or a session.
 */
import { Type } from '@sinclair/typebox';
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findReadable, parseFilename } from '../../domain/objects.js';
import { optionalAnyAuth } from '../auth.js';
import type { AppContext } from '../context.js';
import { sendObject } from '../downloads.js';

export function registerPublicStorageRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.register(async (scope) => {
    scope.addHook('onRequest', optionalAnyAuth(ctx));
    const handler = async (request: FastifyRequest<{ Params: { bucket: string; filename: string } }>, reply: FastifyReply) => {
      const filename = parseFilename(request.params.filename);
      const found = await findReadable(ctx.objects, { storageName: request.params.bucket }, filename, request.principal.user?.id ?? null);
      return sendObject(ctx.objects, request, reply, found.bucket, found.object);
    };
    const schema = {
      tags: ['Storage URLs'],
      params: Type.Object({ bucket: Type.String(), filename: Type.String() }),
    };
    scope.get('/storage/:bucket/:filename', { schema: { ...schema, summary: "Download a file by its url" }, config: { anonymousRead: true } }, handler);
    scope.head('/storage/:bucket/:filename', { schema: { ...schema, summary: "A file's metadata by its url" }, config: { anonymousRead: true } }, handler);
  });
}
