/**
 * What the two copies (CopyObject, UploadPartCopy) share: the source named
 * by x-amz-copy-source, and its bytes' MD5 taken as they pass (the copy's
 * S3 ETag).
 */
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { sourceThrough } from '../blob/joined-streams.js';
import { s3Errors } from './errors.js';

/**
 * x-amz-copy-source: `[/]bucket/key[?versionId=null]`, the key URL-encoded.
 * Buckets here are unversioned, so the only version there is is `null`.
 */
export function parseCopySource(raw: string | string[] | undefined): { bucket: string; key: string } {
  const value = Array.isArray(raw) ? raw[0] : raw;
  const invalid = () => s3Errors.invalidArgument('x-amz-copy-source must be /bucket/key, URL-encoded');
  if (value === undefined) throw invalid();
  const [path = '', query] = value.split('?', 2);
  if (query !== undefined && query !== '' && query !== 'versionId=null') {
    throw s3Errors.invalidArgument('Invalid version id specified: buckets here are unversioned; only versionId=null exists');
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(path.startsWith('/') ? path.slice(1) : path);
  } catch {
    throw invalid();
  }
  const slash = decoded.indexOf('/');
  if (slash <= 0 || slash === decoded.length - 1) throw invalid();
  return { bucket: decoded.slice(0, slash), key: decoded.slice(slash + 1) };
}

/** The bytes as they pass to the upload, with their MD5 taken on the way (the copy's S3 ETag). */
export function md5Passing(body: Buffer | Readable): { stream: Readable; md5Hex: () => string } {
  const md5 = createHash('md5');
  let hex: string | undefined;
  const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      md5.update(chunk);
      done(null, chunk);
    },
  });
  // An upload refused before it read every byte (over the cap) must not leave the store's stream open.
  return { stream: sourceThrough(source, tap), md5Hex: () => (hex ??= md5.digest('hex')) };
}
