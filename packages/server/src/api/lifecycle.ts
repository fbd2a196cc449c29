/** A bucket's lifecycle rules on both storage APIs (S3's LifecycleConfiguration as JSON, domain/lifecycle.ts). */
import { Data, LifecycleConfigurationSchema, MessageSchema } from '@pail/shared';
import { actorOf } from '../domain/audit.js';
import { getOwnBucket } from '../domain/buckets.js';
import { errors } from '../domain/errors.js';
import { deleteBucketLifecycle, getBucketLifecycle, putBucketLifecycle } from '../domain/lifecycle.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, BucketParams, forApi, type Api, type Scope } from '../http/route.js';

export function registerLifecycleRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const { db } = ctx;
  const tag = API_TAGS[api];

  addRoute(scope, {
    operation: 'getLifecycle',
    routes: forApi(api, { developer: ['GET /api/v1/buckets/:id/lifecycle', 'GET /api/v1/bucket/:id/lifecycle'], client: ['GET /api/buckets/:id/lifecycle'] }),
    tag,
    schema: { params: BucketParams, response: { 200: Data(LifecycleConfigurationSchema) } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const rules = await getBucketLifecycle(db, bucket.id);
      if (rules === null) throw errors.noLifecycle();
      return { data: { rules } };
    },
  });

  addRoute(scope, {
    operation: 'putLifecycle',
    routes: forApi(api, { developer: ['PUT /api/v1/buckets/:id/lifecycle', 'PUT /api/v1/bucket/:id/lifecycle'], client: ['PUT /api/buckets/:id/lifecycle'] }),
    tag,
    schema: { params: BucketParams, body: LifecycleConfigurationSchema, response: { 200: Data(LifecycleConfigurationSchema) } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      return { data: { rules: await putBucketLifecycle(ctx.storage, bucket, request.body.rules, actorOf(request.principal)) } };
    },
  });

  addRoute(scope, {
    operation: 'deleteLifecycle',
    routes: forApi(api, {
      developer: ['DELETE /api/v1/buckets/:id/lifecycle', 'DELETE /api/v1/bucket/:id/lifecycle'],
      client: ['DELETE /api/buckets/:id/lifecycle'],
    }),
    tag,
    schema: { params: BucketParams, response: { 200: MessageSchema } },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      await deleteBucketLifecycle(ctx.storage, bucket, actorOf(request.principal));
      return { message: 'Lifecycle rules removed' };
    },
  });
}
