/** A bucket's webhooks and their deliveries (issue 39), on both storage APIs: the same handlers, each API with its own paths and auth. */
import {
  CreateWebhookBody,
  Data,
  DeliveryParams,
  MessageSchema,
  UpdateWebhookBody,
  WebhookDeliverySchema,
  WebhookParams,
  WebhookSchema,
  WebhookWithSecretSchema,
} from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { actorOf } from '../domain/audit.js';
import {
  createWebhook,
  deleteBucketWebhook,
  getBucketWebhook,
  listBucketWebhooks,
  resendWebhookDelivery,
  rotateWebhookSecret,
  updateBucketWebhook,
  webhookDeliveries,
} from '../domain/webhooks.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, BucketParams, type Api, type Scope } from '../http/route.js';

export function registerWebhookRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const { storage, webhooks } = ctx;
  const tag = API_TAGS[api];
  const base = api === 'developer' ? '/api/v1/buckets/:id/webhooks' : '/api/buckets/:id/webhooks';

  addRoute(scope, {
    operation: 'listWebhooks',
    routes: [`GET ${base}`],
    tag,
    schema: { params: BucketParams, response: { 200: Data(Type.Array(WebhookSchema)) } },
    handler: async (request) => ({ data: await listBucketWebhooks(storage, signedIn(request).id, request.params.id) }),
  });

  addRoute(scope, {
    operation: 'createWebhook',
    routes: [`POST ${base}`],
    tag,
    schema: { params: BucketParams, body: CreateWebhookBody, response: { 201: Data(WebhookWithSecretSchema) } },
    handler: async (request, reply) => {
      const created = await createWebhook(storage, signedIn(request).id, request.params.id, request.body, webhooks, actorOf(request.principal));
      return reply.code(201).send({ data: created });
    },
  });

  addRoute(scope, {
    operation: 'getWebhook',
    routes: [`GET ${base}/:wid`],
    tag,
    schema: { params: WebhookParams, response: { 200: Data(WebhookSchema) } },
    handler: async (request) => ({ data: await getBucketWebhook(storage, signedIn(request).id, request.params.id, request.params.wid) }),
  });

  addRoute(scope, {
    operation: 'updateWebhook',
    routes: [`PATCH ${base}/:wid`],
    tag,
    schema: { params: WebhookParams, body: UpdateWebhookBody, response: { 200: Data(WebhookSchema) } },
    handler: async (request) => ({
      data: await updateBucketWebhook(storage, signedIn(request).id, request.params.id, request.params.wid, request.body, webhooks, actorOf(request.principal)),
    }),
  });

  addRoute(scope, {
    operation: 'deleteWebhook',
    routes: [`DELETE ${base}/:wid`],
    tag,
    schema: { params: WebhookParams, response: { 200: MessageSchema } },
    handler: async (request) => {
      await deleteBucketWebhook(storage, signedIn(request).id, request.params.id, request.params.wid, actorOf(request.principal));
      return { message: 'Webhook deleted' };
    },
  });

  addRoute(scope, {
    operation: 'rotateWebhookSecret',
    routes: [`POST ${base}/:wid/rotate-secret`],
    tag,
    schema: { params: WebhookParams, response: { 200: Data(WebhookWithSecretSchema) } },
    handler: async (request) => ({
      data: await rotateWebhookSecret(storage, signedIn(request).id, request.params.id, request.params.wid, webhooks, actorOf(request.principal)),
    }),
  });

  addRoute(scope, {
    operation: 'listWebhookDeliveries',
    routes: [`GET ${base}/:wid/deliveries`],
    tag,
    schema: { params: WebhookParams, response: { 200: Data(Type.Array(WebhookDeliverySchema)) } },
    handler: async (request) => ({ data: await webhookDeliveries(storage, signedIn(request).id, request.params.id, request.params.wid) }),
  });

  addRoute(scope, {
    operation: 'resendWebhookDelivery',
    routes: [`POST ${base}/:wid/deliveries/:did/resend`],
    tag,
    schema: { params: DeliveryParams, response: { 202: MessageSchema } },
    handler: async (request, reply) => {
      await resendWebhookDelivery(storage, signedIn(request).id, request.params.id, request.params.wid, request.params.did, webhooks);
      return reply.code(202).send({ message: 'Delivery queued again' });
    },
  });
}
