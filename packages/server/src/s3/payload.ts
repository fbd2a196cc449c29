/**
 * Request bodies. A signed payload (x-amz-content-sha256: its hex SHA-256)
 * is checked while it streams: the bytes pass through untouched and a
 * mismatch fails the stream at its end, before the upload can commit, so
 * nothing is buffered. aws-chunked bodies (STREAMING-* payloads) are not
 * served yet.
 */
import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { s3Errors } from './errors.js';
import { UNSIGNED_PAYLOAD } from './sigv4.js';
import { parseXml } from './xml.js';

/** Bodies of bucket operations are small XML documents. */
const SMALL_BODY_BYTES = 64 * 1024;

/** The body as a stream, checked against its signed hash when it has one; `raw`: the request itself. */
export function bodyStream(request: FastifyRequest, payloadHash: string): { stream: Readable; raw: boolean } {
  if (payloadHash === UNSIGNED_PAYLOAD) return { stream: request.raw, raw: true };
  if (/^[0-9a-f]{64}$/.test(payloadHash)) return { stream: verifiedBody(request.raw, payloadHash), raw: false };
  throw s3Errors.notImplemented(`x-amz-content-sha256: ${payloadHash} (aws-chunked uploads; send UNSIGNED-PAYLOAD or the body's SHA-256)`);
}

function verifiedBody(body: Readable, expectedHex: string): Readable {
  const hash = createHash('sha256');
  const checker = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      done(hash.digest('hex') === expectedHex ? null : s3Errors.contentSha256Mismatch());
    },
  });
  body.on('error', (error) => checker.destroy(error));
  return body.pipe(checker);
}

/** A bucket operation's small body, read whole (and checked against its signed hash); when there is one it must be XML. */
export async function smallXmlBody(request: FastifyRequest, payloadHash: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of bodyStream(request, payloadHash).stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > SMALL_BODY_BYTES) throw s3Errors.invalidArgument('The request body is too large for this operation');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() !== '' && parseXml(text) === null) throw s3Errors.malformedXml();
  return text;
}
