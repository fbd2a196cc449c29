/**
 * A new object's ACL. An object has its bucket's visibility (Pail keeps no
 * per-object ACLs, as an S3 bucket with ACLs disabled, S3's default), so a
 * write may name the ACL it will get anyway, and nothing else: storing it
 * without the asked-for access would be a success that did nothing.
 *
 * - `bucket-owner-full-control`, and the canned ACL matching the bucket
 *   (`private` in a private bucket, `public-read` in a public one): taken.
 * - The other of the two: `400 AccessControlListNotSupported`, as S3 answers
 *   an ACL on a bucket without ACLs; the bucket's ACL (PutBucketAcl) is what
 *   changes visibility.
 * - Any other canned ACL, and `x-amz-grant-*` grants: `501 NotImplemented`
 *   (operations.ts, refuseUnsupportedWrite), whatever the bucket.
 */
import { s3Errors } from './errors.js';

/** The canned ACLs a new object may name; any other is 501. */
export const OBJECT_CANNED_ACLS: ReadonlySet<string> = new Set(['private', 'public-read', 'bucket-owner-full-control']);

/** Refuses a canned ACL (`x-amz-acl`, or a form's `acl` field) that differs from what the object gets: its bucket's visibility. */
export function checkObjectAcl(acl: string | string[] | undefined, bucketPublic: boolean): void {
  if (acl === undefined || acl === 'bucket-owner-full-control') return;
  const visibility = bucketPublic ? 'public-read' : 'private';
  if (acl !== visibility) {
    throw s3Errors.aclNotSupported(
      `its objects are ${bucketPublic ? 'public' : 'private'}, as the bucket is, so ${String(acl)} cannot apply (PutBucketAcl sets the bucket's)`,
    );
  }
}
