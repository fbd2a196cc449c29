/** API keys, managed from the dashboard's SDK page with a session. */
import { ApiKeySchema, CreateKeyBody, CreatedApiKeySchema, Data, MessageSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createApiKey, listApiKeys, revokeApiKey } from '../../domain/api-keys.js';
import { errors } from '../../domain/errors.js';
import { sessionAuth } from '../auth.js';
import type { AppContext } from '../context.js';

export function registerKeyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const tags = ['API keys'];
  app.register(async (scope) => {
    scope.addHook('onRequest', sessionAuth(ctx));
    scope.get('/api/keys', { schema: { tags, summary: 'List live API keys', response: { 200: Data(Type.Array(ApiKeySchema)) } } }, async (request) => ({
      data: await listApiKeys(ctx.db, request.principal.user!.id),
    }));
    scope.post('/api/keys', { schema: { tags, summary: 'Create an API key (the secret is shown once)', body: Type.Optional(CreateKeyBody), response: { 201: Data(CreatedApiKeySchema) } } }, async (request: FastifyRequest<{ Body: { name?: unknown } | undefined }>, reply) => {
      return reply.code(201).send({ data: await createApiKey(ctx.db, request.principal.user!.id, request.body?.name) });
    });
    scope.delete('/api/keys/:id', { schema: { tags, summary: 'Revoke an API key', params: Type.Object({ id: Type.String() }), response: { 200: MessageSchema } } }, async (request: FastifyRequest<{ Params: { id: string } }>) => {
      const id = /^[1-9][0-9]{0,15}$/.test(request.params.id) ? Number(request.params.id) : null;
      if (id === null) throw errors.apiKeyNotFound();
      await revokeApiKey(ctx.db, request.principal.user!.id, id);
      await ctx.apiKeys.forget();
      return { message: 'API key revoked' };
    });
  });
}
