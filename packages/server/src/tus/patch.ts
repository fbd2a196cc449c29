/**
 * tus PATCH, answered by Pail itself: the request's body goes to the upload
 * as the raw socket stream, as a PUT's does. Through @tus/server it would be
 * converted to a web stream and back, which read ahead of the disk (tens of
 * MiB held per upload) and cost a third of the throughput (bench/README.md,
 * resumable uploads). Creation, HEAD and termination stay with @tus/server;
 * the rules are the domain's either way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountRow, BucketIdentity } from '../db/schema.js';
import { errors } from '../domain/errors.js';
import type { StoragePorts } from '../domain/ports.js';
import { receiveResumableBytes, RESUMABLE_IDLE_SECONDS } from '../domain/resumable-uploads.js';

const TUS_VERSION = '1.0.0';
const OFFSET_CONTENT_TYPE = 'application/offset+octet-stream';

export async function patchResumableUpload(
  ports: StoragePorts,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: { owner: AccountRow; bucket: BucketIdentity; uploadId: string; arrival?: number },
): Promise<FastifyReply> {
  reply.header('tus-resumable', TUS_VERSION);
  if (request.headers['tus-resumable'] !== TUS_VERSION) {
    return reply
      .code(412)
      .header('tus-version', TUS_VERSION)
      .send({ error: `Tus-Resumable ${TUS_VERSION} is required` });
  }
  const contentType = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== OFFSET_CONTENT_TYPE) {
    return reply.code(415).send({ error: `A PATCH of a resumable upload carries Content-Type: ${OFFSET_CONTENT_TYPE}`, code: 'UnsupportedMediaType' });
  }
  const rawOffset = request.headers['upload-offset'];
  if (typeof rawOffset !== 'string' || !/^\d{1,15}$/.test(rawOffset)) throw errors.validation('Upload-Offset must be a whole number of bytes');
  if (request.headers['upload-length'] !== undefined) throw errors.validation('Upload-Length is set when the upload is created, not later');
  const result = await receiveResumableBytes(ports, caller.uploadId, caller, Number(rawOffset), request.raw, {
    rawRequestBody: true,
    operation: 'resumeUpload',
    ...(caller.arrival !== undefined ? { arrival: caller.arrival } : {}),
  });
  reply.code(204).header('upload-offset', String(result.offset));
  if (!result.finished) {
    reply.header('upload-expires', new Date(Date.now() + RESUMABLE_IDLE_SECONDS * 1000).toUTCString());
  }
  return reply.send();
}
