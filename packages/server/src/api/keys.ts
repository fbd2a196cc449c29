/** API keys, managed from the dashboard's SDK page with a session. */
import { ApiKeySchema, CreateKeyBody, CreatedApiKeySchema, Data, MessageSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { createApiKey, listApiKeys, revokeApiKey } from '../domain/api-keys.js';
import { errors } from '../domain/errors.js';
import { sessionAuth, signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, type Scope } from '../http/route.js';
import { actorOf } from '../domain/audit.js';

const tag = 'API keys';

export function registerKeyRoutes(app: Scope, ctx: AppContext): void {
  void app.register(async (scope: Scope) => {
    scope.addHook('onRequest', sessionAuth(ctx));
    addRoute(scope, {
      operation: 'listKeys',
      routes: ['GET /api/keys'],
      tag,
      schema: { response: { 200: Data(Type.Array(ApiKeySchema)) } },
      handler: async (request) => ({ data: await listApiKeys(ctx.db, signedIn(request).id) }),
    });
    addRoute(scope, {
      operation: 'createKey',
      routes: ['POST /api/keys'],
      tag,
      schema: { body: Type.Optional(CreateKeyBody), response: { 201: Data(CreatedApiKeySchema) } },
      handler: async (request, reply) => {
        const { maxKeysPerUser } = ctx.config;
        const created = await createApiKey(
          ctx.db,
          signedIn(request).id,
          request.body ?? {},
          maxKeysPerUser,
          ctx.s3Credentials,
          ctx.storage.clock,
          actorOf(request.principal),
        );
        return reply.code(201).send({ data: created });
      },
    });
    addRoute(scope, {
      operation: 'revokeKey',
      routes: ['DELETE /api/keys/:id'],
      tag,
      schema: { params: Type.Object({ id: Type.String() }), response: { 200: MessageSchema } },
      handler: async (request) => {
        if (!/^[1-9][0-9]{0,15}$/.test(request.params.id)) throw errors.apiKeyNotFound();
        await revokeApiKey({ db: ctx.db, caches: ctx.storage.caches }, signedIn(request).id, Number(request.params.id), actorOf(request.principal));
        return { message: 'API key revoked' };
      },
    });
  });
}
