/**
 * Who is calling, whichever door and credential proved it: every
 * authenticator (a Pail API key, a session, a Pail signed url, an S3
 * signature, presigned url or POST policy, nobody) yields a Principal, and
 * authorize.ts decides what it may do. A principal carries its owner, what
 * its credential allows (a key's limits; a session and the operator have
 * none), its signer or grant where it has one, and the rate budget its
 * requests spend (RateLimits.spendFor).
 */
import type { KeyLimits, KeyOwner } from '../db/repositories/api-keys.js';
import type { AccountRow } from '../db/schema.js';
import { NO_LIMITS } from './key-limits.js';

export type SignedMethod = 'GET' | 'PUT';

/** What a Pail signed url grants (signed-urls.ts): one method on one file until a time. */
export interface Grant {
  method: SignedMethod;
  storageName: string;
  filename: string;
  /** Unix seconds. */
  expires: number;
  /** `k<key id>` or `s<session id>`. */
  signer: string;
  maxBytes?: number;
  contentType?: string;
}

/**
 * The budget a principal's requests spend: its owner's plan budget (a key,
 * an S3 signature), the Client API budget (a session), the reader address's
 * share-link budget (a signed url, an S3 presigned url or POST policy: a
 * link handed out never spends its owner's), or the address's anonymous
 * budget. The operator's commands spend none.
 */
export type BudgetName = 'plan' | 'client' | 'share-links' | 'address';

interface Acting {
  user: AccountRow;
  /** What the credential allows; NO_LIMITS for a session and the operator. */
  limits: KeyLimits;
}

export type Principal =
  /** A Pail API key (x-api-key or Authorization: Bearer). */
  | (Acting & { via: 'api-key'; keyId: number; budget: 'plan' })
  | (Acting & { via: 'session-cookie' | 'session-token'; sessionId: string; budget: 'client' })
  /** A Pail signed url: its signer (a key or a session) as it is now, and what the url grants. */
  | (Acting & { via: 'signed-url'; grant: Grant; budget: 'share-links' })
  /** A key's S3 credential, signing the request's headers. */
  | (Acting & { via: 's3-signature'; keyId: number; budget: 'plan' })
  /** A key's S3 credential, signing a presigned url or a browser form's policy: share links. */
  | (Acting & { via: 's3-presigned-url' | 's3-post-policy'; keyId: number; budget: 'share-links' })
  /** The operator, acting for an owner from the command line (pail uploads …). */
  | (Acting & { via: 'operator'; budget: null })
  | { via: 'anonymous'; user: null; budget: 'address' };

/** A principal with an account behind it: everyone but the anonymous. */
export type AccountPrincipal = Exclude<Principal, { via: 'anonymous' }>;

/** How an S3 credential signed: the request's headers, a presigned url, or a POST policy. */
export type S3Signing = 's3-signature' | 's3-presigned-url' | 's3-post-policy';

export type S3Principal = Extract<Principal, { via: S3Signing }>;

export type SignedUrlPrincipal = Extract<Principal, { via: 'signed-url' }>;

export const ANONYMOUS: Principal = Object.freeze({ via: 'anonymous', user: null, budget: 'address' });

export const apiKeyPrincipal = (owner: KeyOwner): AccountPrincipal => ({
  via: 'api-key',
  user: owner.user,
  keyId: owner.keyId,
  limits: owner.limits,
  budget: 'plan',
});

export const sessionPrincipal = (via: 'session-cookie' | 'session-token', found: { user: AccountRow; sessionId: string }): AccountPrincipal => ({
  via,
  user: found.user,
  sessionId: found.sessionId,
  limits: NO_LIMITS,
  budget: 'client',
});

export const signedUrlPrincipal = (signer: { user: AccountRow; limits: KeyLimits }, grant: Grant): SignedUrlPrincipal => ({
  via: 'signed-url',
  user: signer.user,
  limits: signer.limits,
  grant,
  budget: 'share-links',
});

export function s3Principal(owner: KeyOwner, via: S3Signing): S3Principal {
  const { user, keyId, limits } = owner;
  return via === 's3-signature' ? { via, user, keyId, limits, budget: 'plan' } : { via, user, keyId, limits, budget: 'share-links' };
}

export const operatorFor = (user: AccountRow): AccountPrincipal => ({ via: 'operator', user, limits: NO_LIMITS, budget: null });

/** The signer a Pail signed url made by this principal names (X-Pail-Signer): its key or its session; null for one that cannot sign. */
export function urlSignerOf(principal: Principal): string | null {
  switch (principal.via) {
    case 'api-key':
      return `k${principal.keyId}`;
    case 'session-cookie':
    case 'session-token':
      return `s${principal.sessionId}`;
    default:
      return null;
  }
}
