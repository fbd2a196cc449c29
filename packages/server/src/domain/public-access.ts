/**
 * A bucket's public access block (S3's Block Public Access), and what it
 * means in Pail, where a bucket is public or private by its visibility
 * (no bucket policies, no object ACLs of their own), on every door:
 *
 * - BlockPublicAcls: the bucket cannot be made public (setVisibility refuses).
 * - IgnorePublicAcls, RestrictPublicBuckets: a public bucket is served as
 *   private: only its owner's credentials (keys, sessions, signed urls) read it.
 * - BlockPublicPolicy: kept and answered; Pail has no policies to block.
 */
import type { Caches } from '../cache/caches.js';
import { deletePublicAccessBlock, findPublicAccessBlock, savePublicAccessBlock } from '../db/repositories/public-access-blocks.js';
import type { BucketRow, Db } from '../db/schema.js';
import { errors } from './errors.js';

export interface PublicAccessBlock {
  blockPublicAcls: boolean;
  ignorePublicAcls: boolean;
  blockPublicPolicy: boolean;
  restrictPublicBuckets: boolean;
}

/** What says whether a bucket's files are for anyone: its visibility and the two switches of its block that hide it (null: no block). */
export type PublicReadFacts = Pick<BucketRow, 'public'> & { ignore_public_acls: number | null; restrict_public_buckets: number | null };

/** Whether anyone, without the owner's credentials, may read the bucket's files (authorize.ts asks; a switch not given is off). */
export const readableByAnyone = (bucket: Partial<PublicReadFacts>): boolean =>
  bucket.public === 1 && bucket.ignore_public_acls !== 1 && bucket.restrict_public_buckets !== 1;

export async function getPublicAccessBlock(db: Db, bucketId: number): Promise<PublicAccessBlock | null> {
  const row = await findPublicAccessBlock(db, bucketId);
  if (row === undefined) return null;
  return {
    blockPublicAcls: row.block_public_acls === 1,
    ignorePublicAcls: row.ignore_public_acls === 1,
    blockPublicPolicy: row.block_public_policy === 1,
    restrictPublicBuckets: row.restrict_public_buckets === 1,
  };
}

/** Saves the block; reads cached before it (domain/objects.ts findReadable) are not served again on any instance. */
export async function putPublicAccessBlock(ports: { db: Db; caches: Caches }, bucketId: number, block: PublicAccessBlock): Promise<void> {
  const bit = (on: boolean) => (on ? 1 : 0);
  await savePublicAccessBlock(ports.db, bucketId, {
    block_public_acls: bit(block.blockPublicAcls),
    ignore_public_acls: bit(block.ignorePublicAcls),
    block_public_policy: bit(block.blockPublicPolicy),
    restrict_public_buckets: bit(block.restrictPublicBuckets),
  });
  await ports.caches.changed('objects');
}

export async function removePublicAccessBlock(ports: { db: Db; caches: Caches }, bucketId: number): Promise<void> {
  await deletePublicAccessBlock(ports.db, bucketId);
  await ports.caches.changed('objects');
}

/** Why making a bucket public failed when its row did not change: its block, or else it is gone. */
export async function publicRefusal(db: Db, bucketId: number): Promise<Error> {
  const block = await findPublicAccessBlock(db, bucketId);
  return block?.block_public_acls === 1 ? errors.publicAccessBlocked() : errors.bucketNotFound();
}
