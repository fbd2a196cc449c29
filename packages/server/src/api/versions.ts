/**
 * Versioned buckets on both storage APIs (decisions.md "Versions and the
 * trash"). The trash has a route of its own; a file's versions, one version's
 * bytes, restoring one and deleting one for good ride on the file routes
 * (files.ts), as suffixes (`…/versions`, `…/restore`) and `?version_id=`.
 */
import { Data, FileVersionSchema, TrashEntrySchema, TrashQuery, type UploadResult } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authorize } from '../domain/authorize.js';
import { getOwnBucket, parseBucketId } from '../domain/buckets.js';
import { errors } from '../domain/errors.js';
import { deleteFileVersion, fileVersions, findReadableVersion, restoreVersion, trash, trashView, versionView, type VersionsPage } from '../domain/versions.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { sendObject } from '../http/downloads.js';
import { addRoute, API_TAGS, BucketParams, forApi, type Api, type Scope } from '../http/route.js';

export function registerVersionRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  addRoute(scope, {
    operation: 'listTrash',
    routes: forApi(api, { developer: ['GET /api/v1/buckets/:id/trash', 'GET /api/v1/bucket/:id/trash'], client: ['GET /api/buckets/:id/trash'] }),
    tag: API_TAGS[api],
    schema: { params: BucketParams, querystring: TrashQuery, response: { 200: Data(Type.Array(TrashEntrySchema)) } },
    handler: async (request) => {
      const bucket = await getOwnBucket(ctx.db, signedIn(request).id, request.params.id);
      return { data: (await trash(ctx.storage, bucket, request.query)).map(trashView) };
    },
  });
}

/** GET …/files/<name>/versions: the file's versions, newest first, a page at a time (?after=<version id>&limit=; its owner only). */
export async function sendVersions(ctx: AppContext, request: FastifyRequest, bucketId: string, filename: string, page: VersionsPage) {
  const bucket = await getOwnBucket(ctx.db, signedIn(request).id, bucketId);
  return { data: (await fileVersions(ctx.storage, bucket, filename, page)).map(versionView) };
}

export const FileVersionsResponse = Data(Type.Array(FileVersionSchema));

/** GET or HEAD …/files/<name>?version_id=: one version's bytes, as the current one's are sent; a delete marker is not found. */
export async function sendVersion(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, bucketId: string, filename: string, versionId: string) {
  const found = await findReadableVersion(ctx.storage, { id: parseBucketId(bucketId) }, filename, request.principal, versionId);
  if ('deleteMarker' in found) throw errors.versionNotFound();
  return sendObject(ctx.storage, request, reply, { bucket: found.bucket, object: found.object });
}

/** POST …/files/<name>/restore {version_id}: a write, asked here with the bucket (the route's operation, signUrl, asks nothing before). */
export async function restore(ctx: AppContext, request: FastifyRequest, bucketId: string, filename: string, body: unknown): Promise<UploadResult> {
  const versionId = (body as { version_id?: unknown } | undefined)?.version_id;
  if (typeof versionId !== 'string') throw errors.validation('version_id is required');
  const user = signedIn(request);
  const bucket = await getOwnBucket(ctx.db, user.id, bucketId);
  authorize(request.principal, 'writeObject', bucket);
  return restoreVersion(ctx.storage, user, bucket, filename, versionId);
}

/** DELETE …/files/<name>?version_id=: that version goes for good (unless locked; `bypassGovernance`: the caller may and asks to bypass GOVERNANCE). */
export async function deleteVersion(
  ctx: AppContext,
  request: FastifyRequest,
  bucketId: string,
  filename: string,
  versionId: string,
  bypassGovernance = false,
): Promise<void> {
  const bucket = await getOwnBucket(ctx.db, signedIn(request).id, bucketId);
  await deleteFileVersion(ctx.storage, bucket, filename, versionId, 'deleteFile', { bypassGovernance });
}
