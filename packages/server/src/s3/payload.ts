/**
 * Request bodies, checked while they stream (an upload's small body once it
 * is read whole, uploadBody) and never gathered whole beyond that:
 * - a signed payload (x-amz-content-sha256: its hex SHA-256) is hashed as it
 *   passes; UNSIGNED-PAYLOAD passes as it is;
 * - aws-chunked payloads (STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER],
 *   STREAMING-UNSIGNED-PAYLOAD-TRAILER) are decoded by aws-chunked.ts, chunk
 *   and trailer signatures checked; their length is x-amz-decoded-content-length;
 * - Content-MD5 and a flexible checksum (header or trailer) are verified
 *   against the decoded bytes (checksums.ts).
 * A mismatch fails the stream at its end (in flush), or the small body's
 * check, before an upload reading it can commit, so nothing is stored.
 */
import type { FastifyRequest } from 'fastify';
import { createHash, hash, type Hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { bodyThrough } from '../blob/joined-streams.js';
import type { BodyVerifier } from '../domain/uploads.js';
import type { S3Caller } from './auth.js';
import { AwsChunkedDecoder, chunkedErrors, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER, type ChunkSigning } from './aws-chunked.js';
import {
  bodyChecks,
  checksumAlgorithmOf,
  checksumTap,
  failedCheck,
  failedCheckOfWhole,
  nodeHash,
  sentChecksumAlgorithm,
  verifiedChecksums,
  wholeNodeHash,
  type BodyCheck,
} from './checksums.js';
import { s3Errors, type S3Error } from './errors.js';
import { UNSIGNED_PAYLOAD } from './sigv4.js';

/**
 * How much of an XML body an operation reads: its bytes, and its tags (each
 * '<'), which bound the parser's work: a body of nothing but empty elements
 * costs the parser a microsecond a tag, so a few megabytes of them would hold
 * the event loop for seconds.
 */
export interface XmlBodyLimits {
  maxBytes: number;
  maxTags: number;
}

/** Bucket configurations (CreateBucketConfiguration, CORS, ACL): small documents. */
export const SMALL_XML_BODY: XmlBodyLimits = { maxBytes: 64 * 1024, maxTags: 8192 };

export interface RequestBody {
  stream: Readable;
  /**
   * Its chunks are this body's alone: the request's own, passed on untouched
   * (or joined into fresh buffers) by the checks, and held by nobody once
   * read, so the reader may free each as soon as it has copied it
   * (release-chunk.ts).
   */
  raw: boolean;
  /** The decoded length an aws-chunked body declares (x-amz-decoded-content-length); undefined for other bodies (Content-Length is theirs). */
  declaredSize?: number;
  /** With `md5: true`: the hex MD5 of the decoded bytes, once the stream has ended (an object's S3 ETag). */
  md5Hex?: () => string;
  /** The flexible checksum the bytes were verified against ({crc32: base64}), once the stream has ended; undefined when none was sent. */
  checksums?: () => Record<string, string> | undefined;
  /** With `checksum`: that checksum of the decoded bytes (base64) once the stream has ended, as verified when sent, else as computed. */
  checksum?: () => Promise<string>;
}

export interface BodyOptions {
  /** Take the bytes' MD5 (md5Hex). */
  md5?: boolean;
  /** Know this flexible checksum of the bytes (a multipart upload's algorithm), sent or not. */
  checksum?: string;
  /** Check no flexible checksum header against the body (CompleteMultipartUpload's describe the object). */
  objectChecksumHeaders?: boolean;
}

/** An MD5 taken of the bytes as they pass, never compared: S3 tools expect it as the object's ETag. */
function md5Tap(): { check: BodyCheck; hex: () => string } {
  // Made on the first update: a body checked whole is hashed in one call (ofWhole).
  let md5: Hash | undefined;
  let hex: string | undefined;
  const ofWhole = (bytes: Buffer): string => {
    const digest = hash('md5', bytes, 'buffer');
    hex = digest.toString('hex');
    return digest.toString('base64');
  };
  return {
    check: {
      digest: { update: (data) => (md5 ??= createHash('md5')).update(data), digest: () => (md5 ??= createHash('md5')).copy().digest() },
      expected: () => undefined,
      mismatch: s3Errors.internal,
      ofWhole,
    },
    hex: () => (hex ??= (md5 ??= createHash('md5')).digest('hex')),
  };
}

/**
 * The body as a stream, decoded and checked as its payload mode and headers
 * say. `caller` (whose key checks chunk signatures) is needed only for a
 * signed aws-chunked body. Throws S3's error for a malformed or unsupported claim.
 */
export function bodyStream(request: FastifyRequest, payloadHash: string, caller?: S3Caller, options: BodyOptions = {}): RequestBody {
  const { body, checks } = uncheckedBody(request, payloadHash, caller, options);
  if (checks.length > 0) body.stream = checked(body.stream, checks);
  return body;
}

/**
 * An upload's body (PutObject), decoded but not yet checked: its checks go to
 * uploadObject (`verify`), which runs them on a small body once it has read
 * it whole, one digest after another over its bytes, without a stream stage
 * (whose events cost a small upload more than its digests), and puts them
 * around a longer body's stream, as bodyStream does.
 */
export function uploadBody(request: FastifyRequest, payloadHash: string, caller?: S3Caller, options: BodyOptions = {}): RequestBody & { verify: BodyVerifier } {
  const { body, checks } = uncheckedBody(request, payloadHash, caller, options);
  const verify: BodyVerifier = {
    whole: (bytes) => {
      const failed = failedCheckOfWhole(checks, bytes);
      if (failed instanceof Promise) return failed.then(throwFailed);
      throwFailed(failed);
    },
    around: (stream) => (checks.length > 0 ? checked(stream, checks) : stream),
  };
  return Object.assign(body, { verify });
}

const throwFailed = (failed: S3Error | null): void => {
  if (failed) throw failed;
};

/** The body decoded, and the checks it must pass (with `md5` and `checksum`'s digests among them). */
function uncheckedBody(
  request: FastifyRequest,
  payloadHash: string,
  caller: S3Caller | undefined,
  options: BodyOptions,
): { body: RequestBody; checks: BodyCheck[] } {
  const tap = options.md5 ? md5Tap() : undefined;
  const wanted = options.checksum;
  // The wanted checksum is taken as the bytes pass only when the request does not send it (then it is verified, and known).
  const computed = wanted !== undefined && sentChecksumAlgorithm(request.headers) !== wanted ? checksumTap(wanted) : undefined;
  const taps = [...(tap ? [tap.check] : []), ...(computed ? [computed.check] : [])];
  const read = readBody(request, payloadHash, caller, taps, options.objectChecksumHeaders !== true);
  const body = read.body;
  // Set on the body, not spread into a new object: a spread followed by more fields is a slow copy in V8.
  if (tap) body.md5Hex = tap.hex;
  if (wanted !== undefined) body.checksum = computed?.value ?? (() => Promise.resolve(body.checksums?.()?.[wanted] ?? ''));
  return read;
}

function readBody(
  request: FastifyRequest,
  payloadHash: string,
  caller: S3Caller | undefined,
  taps: BodyCheck[],
  flexible: boolean,
): { body: RequestBody; checks: BodyCheck[] } {
  const headers = request.headers;
  if (payloadHash.startsWith('STREAMING-')) return chunkedBody(request, payloadHash, caller, taps);
  const checks = [...bodyChecks(headers, undefined, flexible), ...taps];
  if (payloadHash === UNSIGNED_PAYLOAD) {
    return { body: { stream: request.raw, raw: true, checksums: verifiedChecksums(checks) }, checks };
  }
  if (/^[0-9a-f]{64}$/.test(payloadHash)) {
    const payload: BodyCheck = {
      digest: nodeHash('sha256'),
      expected: () => Buffer.from(payloadHash, 'hex').toString('base64'),
      mismatch: s3Errors.contentSha256Mismatch,
      ofWhole: wholeNodeHash('sha256'),
    };
    return { body: { stream: request.raw, raw: true, checksums: verifiedChecksums(checks) }, checks: [payload, ...checks] };
  }
  throw s3Errors.invalidArgument(`x-amz-content-sha256 must be the payload's hex SHA-256, ${UNSIGNED_PAYLOAD} or a STREAMING-* mode`);
}

function chunkedBody(
  request: FastifyRequest,
  payloadHash: string,
  caller: S3Caller | undefined,
  taps: BodyCheck[],
): { body: RequestBody; checks: BodyCheck[] } {
  const headers = request.headers;
  const signed = payloadHash === STREAMING_SIGNED || payloadHash === STREAMING_SIGNED_TRAILER;
  const trailing = payloadHash === STREAMING_SIGNED_TRAILER || payloadHash === STREAMING_UNSIGNED_TRAILER;
  if (!signed && !trailing) throw s3Errors.notImplemented(`x-amz-content-sha256: ${payloadHash}`);
  const decodedLength = single(headers['x-amz-decoded-content-length']);
  if (decodedLength === undefined || !/^\d{1,15}$/.test(decodedLength)) throw chunkedErrors.missingDecodedLength();
  const trailerNames = trailing ? announcedTrailers(headers) : [];
  let signing: ChunkSigning | undefined;
  if (signed) {
    if (caller?.chunkSigning === undefined) throw s3Errors.notImplemented(`${payloadHash} for this request`);
    signing = caller.chunkSigning;
  }
  const decoder = new AwsChunkedDecoder({ signing, decodedLength: Number(decodedLength), trailerNames });
  const trailerChecksum = trailerNames.map((name) => ({ name, algorithm: checksumAlgorithmOf(name) })).find((entry) => entry.algorithm !== undefined);
  const checks = [
    ...bodyChecks(headers, trailerChecksum && { algorithm: trailerChecksum.algorithm!, value: () => decoder.trailers.get(trailerChecksum.name) }),
    ...taps,
  ];
  // A body refused midway (a bad chunk signature) is read on to its end and dropped, so the connection can carry the answer and the next request.
  const decoded = bodyThrough(request.raw, decoder);
  return { body: { stream: decoded, raw: false, declaredSize: Number(decodedLength), checksums: verifiedChecksums(checks) }, checks };
}

/** x-amz-trailer: the trailing checksums a body ends with (S3 takes checksums only). */
function announcedTrailers(headers: IncomingHttpHeaders): string[] {
  const names = (single(headers['x-amz-trailer']) ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  for (const name of names) if (checksumAlgorithmOf(name) === undefined) throw s3Errors.invalidArgument(`Unsupported x-amz-trailer: ${name}`);
  if (names.length > 1) throw s3Errors.invalidArgument('Expecting a single x-amz-checksum- trailer');
  return names;
}

/**
 * Bytes that are not the request's own body (a browser form's file part),
 * checked against the Content-MD5 and flexible checksum `fields` carry just as
 * a PutObject's headers are: a mismatch fails the stream at its end, before
 * an upload reading it commits. Throws S3's error for a malformed value.
 */
export function checkedAgainst(body: Readable, fields: IncomingHttpHeaders): Pick<RequestBody, 'stream' | 'checksums'> {
  const checks = bodyChecks(fields);
  return checks.length === 0 ? { stream: body } : { stream: checked(body, checks), checksums: verifiedChecksums(checks) };
}

/** The bytes pass through untouched into every digest; at the end the first mismatch fails the stream. */
function checked(body: Readable, checks: BodyCheck[]): Readable {
  const checker = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (const check of checks) check.digest.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      failedCheck(checks).then(
        (error) => done(error),
        (error: Error) => done(error),
      );
    },
  });
  // It may fail (its input did: a bad chunk signature) while its reader is between listeners (uploads.ts reads a
  // small body, then hands the rest to the blob store after a few awaits): the failure waits on the stream.
  return bodyThrough(body, checker);
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * An operation's XML body, read whole within `limits` (decoded and checked as
 * bodyStream does with `options`), for its handler to parse. A body that declares
 * more than the limit is refused before a byte of it is read, one that turns
 * out larger or with more tags as soon as it passes the limit, never parsed.
 */
export async function xmlBody(
  request: FastifyRequest,
  payloadHash: string,
  caller?: S3Caller,
  limits: XmlBodyLimits = SMALL_XML_BODY,
  options: BodyOptions = {},
): Promise<string> {
  const declared = single(request.headers[payloadHash.startsWith('STREAMING-') ? 'x-amz-decoded-content-length' : 'content-length']);
  if (declared !== undefined && Number(declared) > limits.maxBytes) throw s3Errors.bodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  let tags = 0;
  for await (const chunk of bodyStream(request, payloadHash, caller, options).stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limits.maxBytes) throw s3Errors.bodyTooLarge();
    for (let at = chunk.indexOf(LESS_THAN); at !== -1; at = chunk.indexOf(LESS_THAN, at + 1)) tags += 1;
    if (tags > limits.maxTags) throw s3Errors.malformedXml();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const LESS_THAN = 0x3c;
