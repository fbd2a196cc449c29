/**
 * Zip downloads, on both storage APIs: a folder (`GET …/zip?prefix=`) or a
 * selection of files and folders (`POST …/zip`, as JSON or as an HTML form,
 * so a browser downloads it with its session cookie and never holds it in
 * memory). One request spends one unit of the budget, whatever it holds.
 */
import { ZipBody, ZipQuery, type ZipSelection } from '@pail/shared';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyReply } from 'fastify';
import { getOwnBucket } from '../domain/buckets.js';
import { startZip, type ZipArchive } from '../domain/zip-archives.js';
import { folderZip, selectionZip } from '../domain/zip-selection.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, BucketParams, forApi, type Api, type Scope } from '../http/route.js';
import { SentChunkRelease } from '../http/sent-chunks.js';

/** 10,000 names of up to 1 KiB each, with room for the JSON or form around them. */
const SELECTION_BODY_LIMIT = 12 * 1024 * 1024;

/** A form's fields as the JSON body's: `prefix`, and `filenames` and `folders` repeated. */
function selectionOfForm(body: string): ZipSelection {
  const fields = new URLSearchParams(body);
  const prefix = fields.get('prefix');
  return { ...(prefix === null ? {} : { prefix }), filenames: fields.getAll('filenames'), folders: fields.getAll('folders') };
}

function sendZip(reply: FastifyReply, archive: ZipArchive): FastifyReply {
  // A client gone before the end: the file being read is closed and no more is read.
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) archive.cancel();
  });
  reply.headers({
    'content-type': 'application/zip',
    'content-disposition': contentDisposition(archive.name),
    'cache-control': 'private, no-store',
    'x-content-type-options': 'nosniff',
  });
  // The files' chunks are freed as soon as they are sent, so a zip of any size holds a few megabytes.
  return reply.send(new SentChunkRelease(archive.stream));
}

export function registerZipRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const { db, storage } = ctx;
  const tag = API_TAGS[api];

  addRoute(scope, {
    operation: 'zipFolder',
    routes: forApi(api, {
      developer: ['GET /api/v1/buckets/:id/zip', 'GET /api/v1/bucket/:id/zip'],
      client: ['GET /api/buckets/:id/zip'],
    }),
    tag,
    schema: { params: BucketParams, querystring: ZipQuery, produces: ['application/zip'] },
    handler: async (request, reply) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      return sendZip(reply, await startZip(storage, folderZip(db, bucket, request.query.prefix)));
    },
  });

  scope.register(async (forms: Scope) => {
    forms.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: SELECTION_BODY_LIMIT }, (_request, body, done) =>
      done(null, selectionOfForm(body as string)),
    );
    addRoute(forms, {
      operation: 'zipSelection',
      routes: forApi(api, {
        developer: ['POST /api/v1/buckets/:id/zip', 'POST /api/v1/bucket/:id/zip'],
        client: ['POST /api/buckets/:id/zip'],
      }),
      tag,
      schema: { params: BucketParams, body: ZipBody, consumes: ['application/json', 'application/x-www-form-urlencoded'], produces: ['application/zip'] },
      bodyLimit: SELECTION_BODY_LIMIT,
      handler: async (request, reply) => {
        const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
        return sendZip(reply, await startZip(storage, selectionZip(db, bucket, request.body)));
      },
    });
  });
}
