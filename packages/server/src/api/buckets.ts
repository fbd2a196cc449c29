/** Buckets, on both storage APIs: the same handlers, each API with its own paths and auth (storage-apis.ts). */
import { CreateBucketBody, Data, ListBucketsResponseSchema, MessageSchema, StorageBucketSchema, UpdateBucketBody, VisibilityBody } from '@pail/shared';
import { deleteBucket } from '../domain/bucket-deletion.js';
import { bucketView, createBucket, getOwnBucket, listBuckets, setVisibility, updateBucketLimits } from '../domain/buckets.js';
import { allows } from '../domain/authorize.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, BucketParams, forApi, type Api, type Scope } from '../http/route.js';
import { actorOf } from '../domain/audit.js';

export function registerBucketRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const { db, storage } = ctx;
  const tag = API_TAGS[api];

  addRoute(scope, {
    operation: 'listBuckets',
    routes: forApi(api, {
      developer: ['GET /api/v1/buckets', 'GET /api/v1/bucket', 'GET /api/v1/buckets/list', 'GET /api/v1/bucket/list'],
      client: ['GET /api/buckets'],
    }),
    tag,
    schema: { response: { 200: ListBucketsResponseSchema } },
    handler: async (request) => {
      const { principal } = request;
      const buckets = (await listBuckets(db, signedIn(request).id)).filter((bucket) => allows(principal, 'listBuckets', { id: bucket.id }));
      return { data: buckets, buckets };
    },
  });

  addRoute(scope, {
    operation: 'createBucket',
    routes: forApi(api, {
      developer: ['POST /api/v1/buckets', 'POST /api/v1/bucket', 'POST /api/v1/buckets/create', 'POST /api/v1/bucket/create'],
      client: ['POST /api/buckets'],
    }),
    tag,
    schema: { body: CreateBucketBody, response: { 201: Data(StorageBucketSchema) } },
    handler: async (request, reply) => {
      const bucket = await createBucket(db, signedIn(request).id, request.body, ctx.config.maxBucketsPerUser, actorOf(request.principal));
      return reply.code(201).send({ data: bucket });
    },
  });

  addRoute(scope, {
    operation: 'getBucket',
    routes: forApi(api, { developer: ['GET /api/v1/buckets/:id', 'GET /api/v1/bucket/:id'], client: ['GET /api/buckets/:id'] }),
    tag,
    schema: { params: BucketParams, response: { 200: Data(StorageBucketSchema) } },
    handler: async (request) => ({ data: bucketView(await getOwnBucket(db, signedIn(request).id, request.params.id)) }),
  });

  addRoute(scope, {
    operation: 'updateBucket',
    routes: forApi(api, { developer: ['PATCH /api/v1/buckets/:id', 'PATCH /api/v1/bucket/:id'], client: ['PATCH /api/buckets/:id'] }),
    tag,
    schema: { params: BucketParams, body: UpdateBucketBody, response: { 200: Data(StorageBucketSchema) } },
    handler: async (request) => ({
      data: await updateBucketLimits(storage, signedIn(request).id, request.params.id, request.body, actorOf(request.principal)),
    }),
  });

  addRoute(scope, {
    operation: 'deleteBucket',
    routes: forApi(api, {
      developer: ['DELETE /api/v1/buckets/:id', 'DELETE /api/v1/bucket/:id', 'DELETE /api/v1/buckets/:id/delete', 'DELETE /api/v1/bucket/:id/delete'],
      client: ['DELETE /api/buckets/:id'],
    }),
    tag,
    schema: { params: BucketParams, response: { 200: MessageSchema } },
    handler: async (request) => {
      await deleteBucket(storage, signedIn(request).id, request.params.id, 'deleteBucket', actorOf(request.principal));
      return { message: 'Bucket deleted successfully' };
    },
  });

  addRoute(scope, {
    operation: 'setVisibility',
    routes: forApi(api, {
      developer: ['POST /api/v1/buckets/:id/visibility', 'POST /api/v1/bucket/:id/visibility'],
      client: ['POST /api/buckets/:id/visibility', 'PATCH /api/buckets/:id/visibility'],
    }),
    tag,
    schema: { params: BucketParams, body: VisibilityBody, response: { 200: MessageSchema } },
    handler: async (request) => {
      await setVisibility(storage, signedIn(request).id, request.params.id, request.body, actorOf(request.principal));
      return { message: 'Visibility updated' };
    },
  });
}
