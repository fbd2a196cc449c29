/**
 * The flexible checksums S3 tools send and ask for (CRC32, CRC32C,
 * CRC64NVME, SHA-1, SHA-256): their digests, computed as bytes stream. The
 * CRCs are the AWS SDK's own (@aws-sdk/checksums), the rest node:crypto.
 * Values travel as base64 of the digest, as S3 writes them.
 */
import { Crc32, Crc32c, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { sourceThrough } from '../blob/joined-streams.js';

export interface Digest {
  update(data: Uint8Array): void;
  digest(): Promise<Uint8Array> | Uint8Array;
}

const nodeHash = (algorithm: string): Digest => {
  const hash = createHash(algorithm);
  return { update: (data) => hash.update(data), digest: () => hash.digest() };
};

export interface ChecksumAlgorithm {
  /** As S3 names it in its messages and XML (ChecksumCRC32, …). */
  label: string;
  /** The digest's length in bytes (a base64 value of another length is not this checksum). */
  bytes: number;
  create: () => Digest;
  /** Whether a multipart upload may keep a FULL_OBJECT checksum of it (the CRCs) or only a COMPOSITE one (the SHAs). */
  fullObject: boolean;
}

export const CHECKSUM_ALGORITHMS: Record<string, ChecksumAlgorithm> = {
  crc32: { label: 'CRC32', bytes: 4, create: () => new Crc32(), fullObject: true },
  crc32c: { label: 'CRC32C', bytes: 4, create: () => new Crc32c(), fullObject: true },
  crc64nvme: { label: 'CRC64NVME', bytes: 8, create: () => new Crc64Nvme(), fullObject: true },
  sha1: { label: 'SHA1', bytes: 20, create: () => nodeHash('sha1'), fullObject: false },
  sha256: { label: 'SHA256', bytes: 32, create: () => nodeHash('sha256'), fullObject: false },
};

export const base64Digest = async (digest: Digest): Promise<string> => Buffer.from(await digest.digest()).toString('base64');

/** S3's COMPOSITE multipart checksum: the checksum of the parts' binary checksums, then `-<parts>`. */
export async function compositeChecksum(algorithm: string, partChecksums: string[]): Promise<string> {
  const digest = CHECKSUM_ALGORITHMS[algorithm]!.create();
  for (const value of partChecksums) digest.update(Buffer.from(value, 'base64'));
  return `${await base64Digest(digest)}-${partChecksums.length}`;
}

/** Whether a stored checksum is a COMPOSITE one (it describes the parts, not the bytes as one run). */
export const isComposite = (value: string): boolean => /-\d+$/.test(value);

/**
 * `source`'s bytes as they pass, with the algorithm's checksum taken on the
 * way; `value()` is the base64 checksum once the stream has ended. With
 * `expected`, a different checksum fails the stream at its end (`mismatch()`),
 * so whatever it feeds never completes. The source's failure fails the
 * stream, and the stream's closing (its reader gave up) closes the source.
 */
export function checksumPassing(
  source: Readable,
  algorithm: string,
  expected?: { value: string; mismatch: () => Error },
): { stream: Readable; value: () => string } {
  const digest = CHECKSUM_ALGORITHMS[algorithm]!.create();
  let value: string | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      digest.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      base64Digest(digest).then((result) => {
        value = result;
        done(expected !== undefined && expected.value !== result ? expected.mismatch() : null);
      }, done);
    },
  });
  return {
    stream: sourceThrough(source, stream),
    value: () => {
      if (value === undefined) throw new Error('checksumPassing: the stream has not ended');
      return value;
    },
  };
}
