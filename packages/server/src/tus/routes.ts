/**
 * Resumable uploads over tus 1.0 (core, creation, creation-with-upload,
 * termination, expiration) at `…/buckets/:id/uploads`, on both storage APIs:
 * Pail authenticates the request and finds the bucket, then @tus/server speaks
 * the protocol over Pail's uploads (tus-store.ts), but for PATCH,
 * the data path, which Pail answers itself (patch.ts). The file's name
 * and type come in Upload-Metadata: `filename` (or `name`) and `contentType`
 * (or `filetype`, `type`), as tus-js-client and Uppy send them.
 */
import { Server } from '@tus/server';
import type { Upload } from '@tus/utils';
import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ownBucketForUpload } from '../domain/buckets.js';
import { errors } from '../domain/errors.js';
import { parseFilename } from '../domain/objects.js';
import { createResumableUpload, newResumableId } from '../domain/resumable-uploads.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { patchResumableUpload } from './patch.js';
import { PailTusLocker, PailTusStore, tusError, tusRequests } from './tus-store.js';
import { addRoute, API_TAGS, BucketParams, forApi, type Api, type Scope } from '../http/route.js';
import { contentTypeFor } from '../http/uploads.js';

/** Upload-Metadata is kept and shown back on HEAD: a few names and types, never a document. */
const MAX_METADATA_BYTES = 4096;

const UPLOAD_PATH = /\/uploads\/([^/]+)$/;

const metadataValue = (upload: Upload, ...names: string[]): string | undefined => {
  for (const name of names) {
    const value = upload.metadata?.[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
};

function tusServer(ctx: AppContext, log: FastifyBaseLogger): Server {
  const { storage } = ctx;
  return new Server({
    path: '/uploads',
    datastore: new PailTusStore(storage),
    locker: new PailTusLocker(storage.resumableWriters),
    namingFunction: () => newResumableId(),
    getFileIdFromRequest: (req: Request) => UPLOAD_PATH.exec(new URL(req.url).pathname)?.[1],
    // The upload's url is the creating request's path, one segment longer; relative, so it holds behind any proxy or host name.
    generateUrl: (req: Request, { id }: { id: string }) => `${new URL(req.url).pathname}/${id}`,
    onUploadCreate: async (_req: Request, upload: Upload) => {
      const { owner, bucket } = tusRequests.getStore()!;
      try {
        if (upload.size === undefined) throw errors.validation('Upload-Length is required: the upload must declare its length');
        const metadata = upload.metadata ?? {};
        if (JSON.stringify(metadata).length > MAX_METADATA_BYTES) throw errors.validation(`Upload-Metadata is limited to ${MAX_METADATA_BYTES} bytes`);
        const name = metadataValue(upload, 'filename', 'name');
        if (name === undefined) throw errors.validation('Upload-Metadata must name the file: filename');
        const filename = parseFilename(name);
        const contentType = contentTypeFor(filename, metadataValue(upload, 'contentType', 'filetype', 'type'));
        await createResumableUpload(storage, upload.id, { owner, bucket, filename, contentType, length: upload.size, metadata });
        return {};
      } catch (error) {
        throw tusError(error);
      }
    },
    // Every refusal with Pail's body, {error}: the domain's with their code, the protocol's with its message.
    onResponseError: (_req: Request, error: Error | { status_code: number; body: string }) => {
      const mapped = tusError(error);
      if (mapped !== error) return mapped as { status_code: number; body: string };
      if ('status_code' in error && error.status_code !== 500) {
        return error.body.startsWith('{') ? error : { status_code: error.status_code, body: JSON.stringify({ error: error.body.trim() }) };
      }
      // A fault (tus answers 500 without saying why): logged here, where the error still is.
      log.error({ err: error }, 'resumable upload failed');
      return undefined;
    },
  });
}

export function registerResumableUploadRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const tag = API_TAGS[api];
  const tus = tusServer(ctx, scope.log);

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const owner = signedIn(request);
    const bucket = await ownBucketForUpload(ctx.storage, owner.id, (request.params as { id: string }).id);
    reply.hijack();
    const gone = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    await tusRequests.run({ owner, bucket, arrival: arrivals.get(request), gone: gone.signal }, () => tus.handle(request.raw, reply.raw));
  };

  // Request bodies are the upload's bytes: they reach tus as the raw stream.
  scope.register(async (raw: Scope) => {
    // Taken first thing: a request cut while it is authenticated may reach its upload after a newer one did (resumable-writers.ts).
    raw.addHook('onRequest', (request, _reply, done) => {
      arrivals.set(request, ctx.storage.resumableWriters.arrival());
      done();
    });
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_request, _payload, done) => done(null));
    addRoute(raw, {
      operation: 'createResumableUpload',
      routes: forApi(api, {
        developer: ['POST /api/v1/buckets/:id/uploads', 'POST /api/v1/bucket/:id/uploads'],
        client: ['POST /api/buckets/:id/uploads'],
      }),
      tag,
      schema: { params: BucketParams },
      handler: handle,
    });
    addRoute(raw, {
      operation: 'resumeUpload',
      routes: forApi(api, {
        developer: ['HEAD /api/v1/buckets/:id/uploads/:upload', 'DELETE /api/v1/buckets/:id/uploads/:upload'],
        client: ['HEAD /api/buckets/:id/uploads/:upload', 'DELETE /api/buckets/:id/uploads/:upload'],
      }),
      tag,
      schema: { params: UploadParams },
      handler: handle,
    });
    addRoute(raw, {
      operation: 'resumeUpload',
      routes: forApi(api, {
        developer: ['PATCH /api/v1/buckets/:id/uploads/:upload'],
        client: ['PATCH /api/buckets/:id/uploads/:upload'],
      }),
      tag,
      schema: { params: UploadParams },
      // One upload spends one request of the budget, at its creation: a large file's pieces would otherwise exhaust it.
      config: { unmetered: true },
      handler: async (request, reply) => {
        const owner = signedIn(request);
        const bucket = await ownBucketForUpload(ctx.storage, owner.id, request.params.id);
        return patchResumableUpload(ctx.storage, request, reply, { owner, bucket, uploadId: request.params.upload, arrival: arrivals.get(request) });
      },
    });
  });
}

/** When each resumable-upload request arrived (ResumableWriters.arrival()). */
const arrivals = new WeakMap<FastifyRequest, number>();

const UploadParams = Type.Object({ id: Type.String(), upload: Type.String() });
