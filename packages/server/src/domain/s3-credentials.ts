/**
 * S3 credentials (issue 23): an access key id and a secret access key made
 * with every API key. SigV4 proves knowledge of the secret with an HMAC, so
 * the server needs the secret itself, not a hash: it is stored sealed
 * (secret-sealer.ts), bound to its access key id, under a key of its own.
 */
import { LRUCache } from 'lru-cache';
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { SecretSealer } from './secret-sealer.js';

/** RFC 4648 base32 letters: AWS access key ids use A-Z and 2-7. */
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const ACCESS_KEY_ID_LENGTH = 20;
/** Signing keys kept: one per credential, day and region in use. */
const SIGNING_KEYS_KEPT = 1024;
const VERIFIED_URLS_KEPT = 10_000;

export const looksLikeAccessKeyId = (value: string): boolean => /^[A-Z2-7]{20}$/.test(value);

export interface IssuedCredential {
  accessKeyId: string;
  secretAccessKey: string;
  /** What the database keeps instead of the secret. */
  sealedSecret: string;
}

export class S3CredentialSealer {
  private readonly sealer: SecretSealer;
  private readonly signingKeys = new LRUCache<string, Buffer>({ max: SIGNING_KEYS_KEPT });
  /**
   * Presigned urls whose signature was verified, by what the signature covers
   * (s3/auth.ts presignedUrlKey), with the signing key that verified it. A url
   * fetched again (a page's images, a player's ranges) costs a lookup instead
   * of the canonical request, its hash and the HMAC; only a verified url gets
   * in, and it counts only with the same signing key, the one its credential
   * yields now. Its clock and its key's revocation are checked on every use.
   */
  private readonly verifiedUrls = new LRUCache<string, Buffer>({ max: VERIFIED_URLS_KEPT });

  /** `secret` is the server secret shared by every instance. */
  constructor(secret: string) {
    this.sealer = new SecretSealer(secret, 'pail s3 credentials v1');
  }

  issue(): IssuedCredential {
    let accessKeyId = '';
    for (let i = 0; i < ACCESS_KEY_ID_LENGTH; i++) accessKeyId += BASE32[randomInt(BASE32.length)];
    // 30 random bytes are 40 base64 characters; base64url keeps the secret free of '/' and '+', which some tools mangle.
    const secretAccessKey = randomBytes(30).toString('base64url');
    return { accessKeyId, secretAccessKey, sealedSecret: this.seal(accessKeyId, secretAccessKey) };
  }

  /** The access key id is bound in as associated data: a sealed secret copied onto another key's row does not open. */
  seal(accessKeyId: string, secretAccessKey: string): string {
    return this.sealer.seal(accessKeyId, secretAccessKey);
  }

  /**
   * SigV4's signing key for `scope` (date/region/service/aws4_request) of this credential (for a null
   * scope, Signature Version 2's: the secret itself), or null when its sealed secret does not open. Opening the secret and deriving the key took a fifth of a small S3
   * GET's CPU, and a client signs a whole day's requests with one key, so a key that verified a
   * signature is kept (keepSigningKey): by the sealed secret as stored, so a credential sealed anew never
   * meets an old entry, and only once it proved itself, so made-up scopes cannot crowd out real ones.
   * Revocation is the key lookup's.
   */
  signingKey(accessKeyId: string, sealedSecret: string, scope: string | null): Buffer | null {
    const kept = this.signingKeys.get(signingKeyId(accessKeyId, sealedSecret, scope));
    if (kept) return kept;
    const secret = this.open(accessKeyId, sealedSecret);
    return secret === null ? null : signingKeyOf(secret, scope);
  }

  /** Keeps a signing key that has just verified a request's signature. */
  keepSigningKey(accessKeyId: string, sealedSecret: string, scope: string | null, key: Buffer): void {
    const id = signingKeyId(accessKeyId, sealedSecret, scope);
    // Most requests verify with a kept key: nothing to store again.
    if (this.signingKeys.peek(id) !== key) this.signingKeys.set(id, key);
  }

  /** Whether `signingKey` verified this presigned url's signature before (verifiedUrls). */
  verifiedBefore(urlKey: string, signingKey: Buffer): boolean {
    return this.verifiedUrls.get(urlKey) === signingKey;
  }

  /** Keeps a presigned url whose signature `signingKey` has just verified. */
  keepVerified(urlKey: string, signingKey: Buffer): void {
    this.verifiedUrls.set(urlKey, signingKey);
  }

  /** The secret, or null when the sealed text is not ours (another server secret, or altered). */
  open(accessKeyId: string, sealedSecret: string): string | null {
    return this.sealer.open(accessKeyId, sealedSecret);
  }
}

// A SigV4 scope has slashes: `v2` never names one.
const signingKeyId = (accessKeyId: string, sealedSecret: string, scope: string | null): string => `${accessKeyId}/${scope ?? 'v2'}/${sealedSecret}`;

/**
 * SigV4's signing key for a scope (date/region/service/aws4_request): an HMAC-SHA256 chain over its parts.
 * Signature Version 2 (scope null) has no derived key: its HMAC-SHA1 is keyed with the secret itself.
 */
export function signingKeyOf(secret: string, scope: string | null): Buffer {
  if (scope === null) return Buffer.from(secret, 'utf8');
  let key: Buffer | string = `AWS4${secret}`;
  for (const part of scope.split('/')) key = createHmac('sha256', key).update(part).digest();
  return key as Buffer;
}
