/**
 * Signed urls (decisions.md): a grant to GET or PUT one file until a time,
 * made by a key or a session and carried in the url's query, signed with an
 * HMAC under a secret every instance shares. Nothing is stored per url: each
 * use checks the signature, then that its signer still lives and still may
 * do what the url grants, so revoking the key or ending the session ends
 * its urls at once.
 */
import type { SignedUrl } from '@pail/shared';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { findOwnLiveBucketByStorageName } from '../db/repositories/buckets.js';
import { findSessionAccount } from '../db/repositories/sessions.js';
import type { AccountRow, BucketIdentity, Db } from '../db/schema.js';
import type { ApiKeyAuthenticator } from './api-keys.js';
import { allows, authorize, GRANTED_ACTION } from './authorize.js';
import { nowIso, type Clock } from './clock.js';
import { AppError, errors } from './errors.js';
import { findObjectRow } from '../db/repositories/objects.js';
import { getOwnBucket } from './buckets.js';
import { NO_LIMITS, type KeyLimits } from './key-limits.js';
import { filenamePath, findReadable, type ReadableObject } from './objects.js';
import type { StoragePorts } from './ports.js';
import { signedUrlPrincipal, urlSignerOf, type Grant, type Principal, type SignedMethod, type SignedUrlPrincipal } from './principal.js';

export type { Grant, SignedMethod };

export const MAX_SIGNED_URL_SECONDS = 7 * 24 * 3600;
export const DEFAULT_SIGNED_URL_SECONDS = 3600;

/** The query parameters a signed url carries. */
export const SIGNED_PARAMS = {
  expires: 'X-Pail-Expires',
  signer: 'X-Pail-Signer',
  maxBytes: 'X-Pail-Max-Bytes',
  contentType: 'X-Pail-Content-Type',
  signature: 'X-Pail-Signature',
} as const;

export class UrlSigner {
  private readonly key: Buffer;
  /**
   * Grants already verified, by the url they came with (`urlKey`: the method
   * they grant and the request's path and query, from which the grant is read
   * whole). A url fetched again (a page's images, a client's retries) costs a
   * lookup instead of parsing and an HMAC; only a verified grant gets in.
   */
  private readonly verified = new LRUCache<string, Grant>({ max: 10_000 });

  /** `secret` is the server secret shared by every instance; urls get a key of their own derived from it. */
  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('pail signed urls v1').digest();
  }

  sign(grant: Grant): string {
    return createHmac('sha256', this.key).update(signedText(grant)).digest('base64url');
  }

  /** The query string of a url for this grant. */
  query(grant: Grant): string {
    const params = new URLSearchParams({ [SIGNED_PARAMS.expires]: String(grant.expires), [SIGNED_PARAMS.signer]: grant.signer });
    if (grant.maxBytes !== undefined) params.set(SIGNED_PARAMS.maxBytes, String(grant.maxBytes));
    if (grant.contentType !== undefined) params.set(SIGNED_PARAMS.contentType, grant.contentType);
    params.set(SIGNED_PARAMS.signature, this.sign(grant));
    return params.toString();
  }

  /** The grant a url carries if its signature is right, else null. `claimed` reads it from the url. */
  verifiedGrant(urlKey: string, claimed: () => { grant: Grant; signature: string }): Grant | null {
    const known = this.verified.get(urlKey);
    if (known) return known;
    const { grant, signature } = claimed();
    const expected = Buffer.from(this.sign(grant));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    this.verified.set(urlKey, grant);
    return grant;
  }
}

/** What a signature covers: every field on its own line, so no value can be moved into another. */
function signedText(grant: Grant): string {
  return [grant.method, grant.storageName, grant.filename, grant.expires, grant.signer, grant.maxBytes ?? '', grant.contentType ?? ''].join('\n');
}

/** A signed url's signer as it is now: its owner, and what it may do (a key's limits, or none for a session). */
interface Signer {
  user: AccountRow;
  limits: KeyLimits;
}

export interface SignerPorts {
  db: Db;
  apiKeys: ApiKeyAuthenticator;
  signer: UrlSigner;
  clock: Clock;
}

/**
 * The principal a signed url's use is: its signer as it is now, and the
 * grant; or 403: expired, altered, or ended (its key revoked or expired, its
 * session ended).
 */
export function principalOfSignedUrl(
  ports: SignerPorts,
  urlKey: string,
  claimed: () => { grant: Grant; signature: string },
  nowSeconds: number,
): Principal | Promise<Principal> {
  const grant = ports.signer.verifiedGrant(urlKey, claimed);
  if (!grant) throw errors.signedUrlRefused('is not valid: it was altered, or not made by this service');
  if (grant.expires <= nowSeconds) throw errors.signedUrlRefused('has expired');
  // A url fetched again finds its key's owner in the cache: answered without a promise.
  if (grant.signer.startsWith('k')) {
    const owner = ports.apiKeys.cachedById(Number(grant.signer.slice(1)));
    if (owner === null) throw signerEnded();
    if (owner) return signedUrlPrincipal(owner, grant);
  }
  return signerOf(ports, grant.signer).then((signer) => {
    if (!signer) throw signerEnded();
    return signedUrlPrincipal(signer, grant);
  });
}

const signerEnded = () => errors.signedUrlRefused('has ended: the key or session that made it was revoked or has expired');

async function signerOf(ports: SignerPorts, signer: string): Promise<Signer | null> {
  if (signer.startsWith('k')) {
    const owner = await ports.apiKeys.byId(Number(signer.slice(1)));
    return owner && { user: owner.user, limits: owner.limits };
  }
  const row = await findSessionAccount(ports.db, signer.slice(1));
  if (!row || row.revoked_at !== null || row.expires_at <= nowIso(ports.clock)) return null;
  const { revoked_at: _revoked, expires_at: _expires, ...user } = row;
  return { user, limits: NO_LIMITS };
}

const bucketGone = () => errors.signedUrlRefused('has ended: its bucket was deleted');

/** The file a GET url names; its bucket deleted (or out of its key's reach) ends the url. */
export async function readableBySignedUrl(ports: Pick<StoragePorts, 'db' | 'caches'>, principal: SignedUrlPrincipal): Promise<ReadableObject> {
  const { grant } = principal;
  try {
    return await findReadable(ports, { storageName: grant.storageName }, grant.filename, principal);
  } catch (error) {
    throw error instanceof AppError && error.code === 'BucketNotFound' ? bucketGone() : error;
  }
}

/** The bucket a PUT url uploads into, while it lives and its signer may use it. */
export async function bucketOfSignedUpload(db: Db, principal: SignedUrlPrincipal): Promise<BucketIdentity> {
  const row = await findOwnLiveBucketByStorageName(db, principal.user.id, principal.grant.storageName);
  if (!row || !allows(principal, 'writeObject', row)) throw bucketGone();
  return { id: row.id, owner_id: row.owner_id, storage_name: row.storage_name };
}

/**
 * The type a PUT url stores: with `content_type` in the url, the upload must
 * be of that type (another is 415; none is that type); without, the usual
 * rule (`fallback`: the header, else a guess from the name).
 */
export function signedUploadType(grant: Grant, header: string | undefined, fallback: string): string {
  if (grant.contentType === undefined) return fallback;
  if (header === undefined || header === '') return grant.contentType;
  const media = (type: string) => type.split(';')[0]!.trim().toLowerCase();
  if (media(header) !== media(grant.contentType)) throw errors.contentTypeRefused(grant.contentType);
  return header;
}

export interface SignInput {
  method?: SignedMethod;
  expires_in?: number;
  content_type?: string;
  max_bytes?: number;
}

/**
 * A signed url for one file of the principal's bucket. Making it is the
 * signUrl action (the route asked it), and its signer needs the action the
 * url grants; a GET url is made only for a file that exists.
 */
export async function signFileUrl(
  ports: { db: Db; signer: UrlSigner; baseUrl: string; clock: Clock },
  principal: Principal,
  rawBucketId: string,
  filename: string,
  input: SignInput,
): Promise<SignedUrl> {
  const method = input.method ?? 'GET';
  authorize(principal, 'signUrl');
  authorize(principal, GRANTED_ACTION[method]);
  // authorize('signUrl') refused a principal that cannot sign (anonymous, a signed url).
  const signer = urlSignerOf(principal)!;
  if (method === 'GET' && (input.content_type !== undefined || input.max_bytes !== undefined)) {
    throw errors.validation('content_type and max_bytes are for PUT urls');
  }
  if (input.content_type !== undefined && !/^[A-Za-z0-9][\w.+-]*\/[\w.+-]+$/.test(input.content_type)) {
    throw errors.validation('content_type must be a MIME type such as image/png');
  }
  const bucket = await getOwnBucket(ports.db, principal.user!.id, rawBucketId);
  // With the bucket: a key limited to other buckets finds none here.
  authorize(principal, 'signUrl', bucket);
  if (method === 'GET' && !(await findObjectRow(ports.db, bucket.id, filename))) throw errors.fileNotFound();
  // In whole seconds, rounded up: a url asked for N seconds works for at least N (floored, one asked for 1 could last a millisecond).
  const expires = Math.ceil(ports.clock.now() / 1000) + (input.expires_in ?? DEFAULT_SIGNED_URL_SECONDS);
  const grant: Grant = {
    method,
    storageName: bucket.storage_name,
    filename,
    expires,
    signer,
    maxBytes: input.max_bytes,
    contentType: input.content_type,
  };
  return {
    url: `${ports.baseUrl}/${bucket.storage_name}/${filenamePath(filename)}?${ports.signer.query(grant)}`,
    method,
    expires_at: new Date(expires * 1000).toISOString(),
  };
}
