/**
 * Integrity of a request body: Content-MD5 and S3's flexible checksums
 * (x-amz-checksum-crc32, -crc32c, -crc64nvme, -sha1, -sha256), sent as a
 * header or as a trailer of an aws-chunked body. Digests are computed while
 * the bytes stream (domain/checksum-algorithms.ts).
 *
 * Errors are S3's: a Content-MD5 that does not match is `400 BadDigest`, one
 * that is not a base64 MD5 `400 InvalidDigest`; a flexible checksum that does
 * not match is `400 BadDigest` ("The CRC32 you specified did not match the
 * calculated checksum."), one that is not a well-formed value
 * `400 InvalidRequest` ("Value for x-amz-checksum-crc32 header is invalid.").
 */
import { createHash, hash, type Hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { base64Digest, CHECKSUM_ALGORITHMS, type Digest } from '../domain/checksum-algorithms.js';
import { S3Error } from './errors.js';

export { CHECKSUM_ALGORITHMS };

/** A node:crypto digest, made on its first update: a body checked whole never needs one (BodyCheck.ofWhole). */
export const nodeHash = (algorithm: string): Digest => {
  let state: Hash | undefined;
  return { update: (data) => (state ??= createHash(algorithm)).update(data), digest: () => (state ??= createHash(algorithm)).digest() };
};

const CHECKSUM_PREFIX = 'x-amz-checksum-';

/** The algorithm an `x-amz-checksum-<name>` header or trailer names, or undefined for another name. */
export function checksumAlgorithmOf(headerName: string): string | undefined {
  const name = headerName.toLowerCase();
  if (!name.startsWith(CHECKSUM_PREFIX)) return undefined;
  const algorithm = name.slice(CHECKSUM_PREFIX.length);
  return Object.hasOwn(CHECKSUM_ALGORITHMS, algorithm) ? algorithm : undefined;
}

export const checksumErrors = {
  badDigestMd5: () => new S3Error('BadDigest', 400, 'The Content-MD5 you specified did not match what we received.'),
  invalidDigestMd5: () => new S3Error('InvalidDigest', 400, 'The Content-MD5 you specified was invalid.'),
  mismatch: (algorithm: string) =>
    new S3Error('BadDigest', 400, `The ${CHECKSUM_ALGORITHMS[algorithm]?.label ?? algorithm} you specified did not match the calculated checksum.`),
  invalidValue: (algorithm: string) => new S3Error('InvalidRequest', 400, `Value for ${CHECKSUM_PREFIX}${algorithm} header is invalid.`),
  several: () => new S3Error('InvalidRequest', 400, 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.'),
};

/** The flexible checksum's algorithm a request sends, in a header or announced as a trailer (x-amz-trailer); undefined for none. */
export function sentChecksumAlgorithm(headers: IncomingHttpHeaders): string | undefined {
  for (const name of Object.keys(headers)) {
    const algorithm = name.startsWith(CHECKSUM_PREFIX) ? checksumAlgorithmOf(name) : undefined;
    if (algorithm !== undefined) return algorithm;
  }
  const trailer = headers['x-amz-trailer'];
  return typeof trailer === 'string' ? checksumAlgorithmOf(trailer.trim()) : undefined;
}

/** A digest of the bytes that is never compared (none was sent), for its value: `value()` once the body has ended. */
export function checksumTap(algorithm: string): { check: BodyCheck; value: () => Promise<string> } {
  const digest = CHECKSUM_ALGORITHMS[algorithm]!.create();
  let value: Promise<string> | undefined;
  return {
    check: { digest, expected: () => undefined, mismatch: () => checksumErrors.mismatch(algorithm) },
    value: () => (value ??= base64Digest(digest)),
  };
}

/** One digest to check at the end of the body: its expected base64 value may only be known then (a trailer). */
export interface BodyCheck {
  digest: Digest;
  /** The expected digest, base64; undefined when none came (nothing to check). */
  expected: () => string | undefined;
  mismatch: () => S3Error;
  /** A flexible checksum's algorithm (crc32, …); absent for Content-MD5 and other digests. */
  algorithm?: string;
  /** The digest (base64) of a body read whole, in one node:crypto call, for a digest node:crypto has (failedCheckOfWhole). */
  ofWhole?: (bytes: Buffer) => string;
}

/** A check's `ofWhole` for a node:crypto algorithm. */
export const wholeNodeHash =
  (algorithm: string) =>
  (bytes: Buffer): string =>
    hash(algorithm, bytes, 'base64');

function isBase64Of(value: string, bytes: number): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(value) && value.length % 4 === 0 && Buffer.from(value, 'base64').length === bytes;
}

/** The flexible checksum a request carries in a header (at most one), checked for form. */
function headerChecksum(headers: IncomingHttpHeaders): { algorithm: string; value: string } | undefined {
  let algorithm: string | undefined;
  for (const name of Object.keys(headers)) {
    // (Node gives header names in lowercase.)
    const named = name.startsWith(CHECKSUM_PREFIX) ? checksumAlgorithmOf(name) : undefined;
    if (named === undefined) continue;
    if (algorithm !== undefined) throw checksumErrors.several();
    algorithm = named;
  }
  if (algorithm === undefined) return undefined;
  const raw = headers[`${CHECKSUM_PREFIX}${algorithm}`];
  const value = (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).trim();
  if (!isBase64Of(value, CHECKSUM_ALGORITHMS[algorithm]!.bytes)) throw checksumErrors.invalidValue(algorithm);
  return { algorithm, value };
}

/**
 * The digests a body must match: Content-MD5 when sent, and the flexible
 * checksum of a header, or of the trailer named in x-amz-trailer (`trailer`
 * then gives its value once the body has ended); `flexible: false` leaves
 * the flexible checksum out. Throws S3's error for a malformed header.
 */
export function bodyChecks(headers: IncomingHttpHeaders, trailer?: { algorithm: string; value: () => string | undefined }, flexible = true): BodyCheck[] {
  const checks: BodyCheck[] = [];
  const md5 = headers['content-md5'];
  if (md5 !== undefined) {
    const value = (Array.isArray(md5) ? md5.join(',') : md5).trim();
    if (!isBase64Of(value, 16)) throw checksumErrors.invalidDigestMd5();
    checks.push({ digest: nodeHash('md5'), expected: () => value, mismatch: checksumErrors.badDigestMd5, ofWhole: wholeNodeHash('md5') });
  }
  // (CompleteMultipartUpload's x-amz-checksum-* headers describe the object, not the part list it sends.)
  if (!flexible) return checks;
  const header = headerChecksum(headers);
  if (header !== undefined && trailer !== undefined && header.algorithm !== trailer.algorithm) throw checksumErrors.several();
  if (header !== undefined) {
    checks.push({
      digest: CHECKSUM_ALGORITHMS[header.algorithm]!.create(),
      expected: () => header.value,
      mismatch: () => checksumErrors.mismatch(header.algorithm),
      algorithm: header.algorithm,
    });
  } else if (trailer !== undefined) {
    const { algorithm } = trailer;
    checks.push({
      digest: CHECKSUM_ALGORITHMS[algorithm]!.create(),
      expected: () => {
        const value = trailer.value();
        if (value !== undefined && !isBase64Of(value, CHECKSUM_ALGORITHMS[algorithm]!.bytes)) throw checksumErrors.invalidValue(algorithm);
        return value;
      },
      mismatch: () => checksumErrors.mismatch(algorithm),
      algorithm,
    });
  }
  return checks;
}

/**
 * The flexible checksum a body was checked against, as stored with the object
 * ({crc32: base64}); undefined when none was sent. Read only once the body has
 * ended without error, which is when it has been verified.
 */
export function verifiedChecksums(checks: BodyCheck[]): () => Record<string, string> | undefined {
  return () => {
    const check = checks.find((candidate) => candidate.algorithm !== undefined);
    const value = check?.expected();
    return check?.algorithm !== undefined && value !== undefined ? { [check.algorithm]: value } : undefined;
  };
}

/**
 * failedCheck for a body read whole: each digest taken in one call over its
 * bytes (node:crypto's one-shot hash where the check has one, else its digest
 * object), without a promise unless a digest is asynchronous.
 */
export function failedCheckOfWhole(checks: BodyCheck[], bytes: Buffer): S3Error | null | Promise<S3Error | null> {
  for (const check of checks) {
    if (check.ofWhole === undefined) {
      check.digest.update(bytes);
      continue;
    }
    // Taken even when nothing is expected: a tap (the MD5 of the ETag) keeps the value.
    const actual = check.ofWhole(bytes);
    const expected = check.expected();
    if (expected !== undefined && actual !== expected) return check.mismatch();
  }
  const rest = checks.filter((check) => check.ofWhole === undefined);
  return rest.length === 0 ? null : failedCheck(rest);
}

/** The first failed check's error, or null when every digest matches (or had nothing to match). */
export async function failedCheck(checks: BodyCheck[]): Promise<S3Error | null> {
  for (const check of checks) {
    const expected = check.expected();
    if (expected === undefined) continue;
    const actual = Buffer.from(await check.digest.digest()).toString('base64');
    if (actual !== expected) return check.mismatch();
  }
  return null;
}
