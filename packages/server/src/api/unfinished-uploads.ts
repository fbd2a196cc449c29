/**
 * Unfinished uploads, on both storage APIs (domain/unfinished-uploads.ts):
 * one list across the caller's buckets, as the storage cap is the owner's
 * across buckets, and a cancel by kind and id. The upload's id is
 * `:upload`, not `:id`, which names a bucket on every other route (auth.ts
 * asks authorize() about that bucket).
 */
import { Data, ListUnfinishedUploadsResponseSchema, UNFINISHED_UPLOAD_KINDS, UnfinishedUploadSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { cancelUnfinishedUpload, listUnfinishedUploads } from '../domain/unfinished-uploads.js';
import { accountOf } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, forApi, type Api, type Scope } from '../http/route.js';

// Query values are strings (the server coerces none).
const ListQuery = Type.Object({
  bucket: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: "Only this bucket's uploads (its id)", errorMessage: 'bucket must be a bucket id' }),
  ),
});
const CancelParams = Type.Object({ kind: Type.Union(UNFINISHED_UPLOAD_KINDS.map((k) => Type.Literal(k))), upload: Type.String() });

const bucketOf = (query: { bucket?: string }) => (query.bucket === undefined ? undefined : Number(query.bucket));

export function registerUnfinishedUploadRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const tag = API_TAGS[api];

  addRoute(scope, {
    operation: 'listUnfinishedUploads',
    routes: forApi(api, { developer: ['GET /api/v1/uploads'], client: ['GET /api/uploads'] }),
    tag,
    schema: { querystring: ListQuery, response: { 200: ListUnfinishedUploadsResponseSchema } },
    handler: async (request) => {
      const { uploads, heldBytes } = await listUnfinishedUploads(ctx.db, accountOf(request), bucketOf(request.query));
      return { data: uploads, held_bytes: heldBytes };
    },
  });

  addRoute(scope, {
    operation: 'cancelUnfinishedUpload',
    routes: forApi(api, { developer: ['DELETE /api/v1/uploads/:kind/:upload'], client: ['DELETE /api/uploads/:kind/:upload'] }),
    tag,
    schema: { params: CancelParams, response: { 200: Data(UnfinishedUploadSchema) } },
    handler: async (request) => ({
      data: await cancelUnfinishedUpload(ctx.storage, accountOf(request), request.params.kind, request.params.upload, 'cancelUnfinishedUpload'),
    }),
  });
}
