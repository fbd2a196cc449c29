/**
 * authorize(): every door's access decision, without a server. Each row is a
 * principal, an action and a bucket (absent: the action alone; null: a bucket
 * that does not exist), and what is decided: allowed, or which refusal.
 */
import { PERMISSIONS, type Permission } from '@pail/shared';
import { describe, expect, it } from 'vitest';
import type { AccountRow } from '../src/db/schema.js';
import { ACTION_PERMISSIONS, allows, authorize, bucketScope, decide, type Action, type BucketAccess, type Refusal } from '../src/domain/authorize.js';
import { AppError } from '../src/domain/errors.js';
import {
  ANONYMOUS,
  apiKeyPrincipal,
  operatorFor,
  s3Principal,
  sessionPrincipal,
  signedUrlPrincipal,
  type Grant,
  type Principal,
} from '../src/domain/principal.js';

const OWNER = 7;
const user = { id: OWNER, email: 'owner@example.com', plan: 'free', created_at: '2026-01-01T00:00:00.000Z' } as AccountRow;
const limits = (permissions: readonly Permission[] = PERMISSIONS, buckets: number[] | null = null) => ({ buckets, permissions, expiresAt: null });
const key = (permissions?: readonly Permission[], buckets?: number[] | null) => apiKeyPrincipal({ user, keyId: 3, limits: limits(permissions, buckets) });
const grant = (method: 'GET' | 'PUT'): Grant => ({ method, storageName: 'photos-abc', filename: 'a.png', expires: 1, signer: 'k3' });

const principals = {
  anonymous: ANONYMOUS,
  session: sessionPrincipal('session-cookie', { user, sessionId: 'sid' }),
  'unlimited key': key(),
  'read-only key': key(['read']),
  'write-only key': key(['write']),
  'key of bucket 1': key(PERMISSIONS, [1]),
  'signed GET url': signedUrlPrincipal({ user, limits: limits() }, grant('GET')),
  'signed PUT url of a read-only key': signedUrlPrincipal({ user, limits: limits(['read']) }, grant('PUT')),
  'S3 presigned url of bucket 1': s3Principal({ user, keyId: 3, limits: limits(PERMISSIONS, [1]) }, 's3-presigned-url'),
  operator: operatorFor(user),
} satisfies Record<string, Principal>;

type Who = keyof typeof principals;

const own = (id: number): BucketAccess => ({ id, owner_id: OWNER, public: 0 });
const othersPrivate: BucketAccess = { id: 9, owner_id: 8, public: 0 };
const othersPublic: BucketAccess = { id: 9, owner_id: 8, public: 1 };

const ALLOWED = null;
const UNAUTHORIZED: Refusal = { refusal: 'unauthorized' };
const NOT_FOUND: Refusal = { refusal: 'bucket-not-found' };
const forbidden = (message: string): Refusal => ({ refusal: 'forbidden', message });
const noPermission = (permission: Permission) => forbidden(`This API key does not allow ${permission}`);

const TABLE: [Who, Action, BucketAccess | null | undefined, Refusal | null][] = [
  // Without a credential: reading a public bucket's files, nothing else; private and absent look alike.
  ['anonymous', 'readObject', undefined, ALLOWED],
  ['anonymous', 'readObject', { id: 1 }, ALLOWED],
  ['anonymous', 'readObject', othersPublic, ALLOWED],
  ['anonymous', 'readObject', othersPrivate, UNAUTHORIZED],
  ['anonymous', 'readObject', null, UNAUTHORIZED],
  ['anonymous', 'writeObject', undefined, UNAUTHORIZED],
  ['anonymous', 'listBuckets', undefined, UNAUTHORIZED],
  ['anonymous', 'signUrl', undefined, UNAUTHORIZED],
  // A session may do everything its owner may, in its own buckets, and read public ones.
  ['session', 'createBucket', undefined, ALLOWED],
  ['session', 'manageBucket', own(1), ALLOWED],
  ['session', 'signUrl', { id: 1 }, ALLOWED],
  ['session', 'readObject', othersPublic, ALLOWED],
  ['session', 'readObject', othersPrivate, NOT_FOUND],
  ['session', 'writeObject', othersPublic, NOT_FOUND],
  ['session', 'deleteObject', othersPublic, NOT_FOUND],
  ['session', 'readObject', null, NOT_FOUND],
  ['unlimited key', 'copyObject', own(2), ALLOWED],
  ['unlimited key', 'createBucket', undefined, ALLOWED],
  // Permissions, in the order the action names them.
  ['read-only key', 'readObject', own(1), ALLOWED],
  ['read-only key', 'listObjects', { id: 1 }, ALLOWED],
  ['read-only key', 'listUploads', undefined, ALLOWED],
  ['read-only key', 'writeObject', { id: 1 }, noPermission('write')],
  ['read-only key', 'deleteObject', undefined, noPermission('delete')],
  ['read-only key', 'manageBucket', undefined, noPermission('manage')],
  ['read-only key', 'cancelUpload', undefined, noPermission('write')],
  ['read-only key', 'createBucket', undefined, noPermission('manage')],
  ['read-only key', 'signUrl', undefined, noPermission('manage')],
  ['read-only key', 'copyObject', undefined, noPermission('write')],
  ['write-only key', 'writeObject', own(1), ALLOWED],
  ['write-only key', 'readObject', undefined, noPermission('read')],
  ['write-only key', 'listBuckets', undefined, noPermission('read')],
  // A copy writes its target and reads its source.
  ['write-only key', 'copyObject', undefined, noPermission('read')],
  // A permission refusal comes before the bucket's.
  ['write-only key', 'readObject', null, noPermission('read')],
  // A key limited to a bucket: the others do not exist for it, not even public ones, and it makes none.
  ['key of bucket 1', 'readObject', { id: 1 }, ALLOWED],
  ['key of bucket 1', 'listBuckets', { id: 1 }, ALLOWED],
  ['key of bucket 1', 'listBuckets', { id: 2 }, NOT_FOUND],
  ['key of bucket 1', 'manageBucket', { id: 2 }, NOT_FOUND],
  ['key of bucket 1', 'writeObject', own(2), NOT_FOUND],
  ['key of bucket 1', 'readObject', othersPublic, NOT_FOUND],
  ['key of bucket 1', 'createBucket', undefined, forbidden('This API key is limited to some buckets, so it cannot create buckets')],
  ['S3 presigned url of bucket 1', 'readObject', own(1), ALLOWED],
  ['S3 presigned url of bucket 1', 'readObject', own(2), NOT_FOUND],
  ['S3 presigned url of bucket 1', 'createBucket', undefined, forbidden('This API key is limited to some buckets, so it cannot create buckets')],
  // A signed url does what it grants, as far as its signer still may, and cannot sign urls itself.
  ['signed GET url', 'readObject', own(1), ALLOWED],
  ['signed GET url', 'readObject', othersPublic, ALLOWED],
  ['signed GET url', 'readObject', null, NOT_FOUND],
  ['signed GET url', 'writeObject', undefined, forbidden('This signed url grants GET only')],
  ['signed GET url', 'signUrl', undefined, forbidden('This signed url grants GET only')],
  ['signed PUT url of a read-only key', 'writeObject', own(1), noPermission('write')],
  // The operator acts for the owner from the command line, with everything the owner may.
  ['operator', 'cancelUpload', own(1), ALLOWED],
  ['operator', 'signUrl', undefined, UNAUTHORIZED],
  // Bypassing a GOVERNANCE retention (object lock): a key with bypass-governance, never a url or a stranger.
  ['unlimited key', 'bypassGovernance', undefined, ALLOWED],
  ['read-only key', 'bypassGovernance', undefined, noPermission('bypass-governance')],
  ['signed GET url', 'bypassGovernance', undefined, forbidden('This signed url grants GET only')],
  ['anonymous', 'bypassGovernance', undefined, UNAUTHORIZED],
];

describe('authorize', () => {
  it.each(TABLE.map(([who, action, bucket, expected]) => ({ who, action, bucket, expected })))(
    '$who, $action on $bucket: $expected',
    ({ who, action, bucket, expected }) => {
      const principal = principals[who];
      expect(decide(principal, action, bucket)).toEqual(expected);
      expect(allows(principal, action, bucket)).toBe(expected === null);
    },
  );

  it('throws each refusal as the error the doors answer with', () => {
    const thrown = (principal: Principal, action: Action, bucket?: BucketAccess | null) => {
      try {
        authorize(principal, action, bucket);
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        const { status, code, message } = error as AppError;
        return { status, code, message };
      }
    };
    expect(thrown(principals.session, 'readObject', own(1))).toBeNull();
    expect(thrown(ANONYMOUS, 'readObject', null)).toEqual({ status: 401, code: 'Unauthorized', message: 'Unauthorized' });
    expect(thrown(principals['read-only key'], 'writeObject')).toEqual({ status: 403, code: 'Forbidden', message: 'This API key does not allow write' });
    expect(thrown(principals['key of bucket 1'], 'readObject', { id: 2 })).toEqual({ status: 404, code: 'BucketNotFound', message: 'Bucket not found' });
  });

  it('names the permissions of every action, and the buckets a principal reaches', () => {
    for (const permissions of Object.values(ACTION_PERMISSIONS)) {
      expect(permissions.length).toBeGreaterThan(0);
      for (const permission of permissions) expect(PERMISSIONS).toContain(permission);
    }
    expect(bucketScope(principals['key of bucket 1'])).toEqual([1]);
    expect(bucketScope(principals.session)).toBeNull();
    expect(bucketScope(principals.operator)).toBeNull();
    expect(bucketScope(ANONYMOUS)).toEqual([]);
  });
});
