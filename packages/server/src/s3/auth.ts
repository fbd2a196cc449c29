/**
 * Who signed an S3 request. Every S3 signature (a request's headers, a
 * presigned url, a browser form's POST policy) is checked by one credential
 * lookup, verifyCredential: the key found by its access key id, the
 * signature recomputed with the key's secret, and the request's budget
 * spent, by the principal it yields (a header signature spends the owner's
 * Developer API budget, as a request with the key itself would; a presigned
 * url or a policy the reader address's share-link budget, as a Pail signed
 * url does). Aws-chunked bodies check their chunk signatures with the
 * signing key it verified (payload.ts).
 */
import type { FastifyRequest } from 'fastify';
import { ANONYMOUS, s3Principal, type S3Principal, type S3Signing } from '../domain/principal.js';
import type { AppContext } from '../http/context.js';
import { s3Errors } from './errors.js';
import { checkSignedHeaders, checkTime, claimedSignature, signatureMatches, type ClaimedSignature, type SignedRequest } from './sigv4.js';

export interface S3Caller {
  principal: S3Principal;
  claimed: ClaimedSignature;
  /** The SigV4 signing key of the request's scope, for its chunk signatures too (aws-chunked.ts). */
  signingKey: Buffer;
}

/** The credential a signature names: its access key id and scope (date/region/s3/aws4_request). */
export type Credential = Pick<ClaimedSignature, 'accessKeyId' | 'scope'>;

/**
 * The principal behind an S3 credential, once `matches` accepts the
 * signature under its signing key, with that key. An unknown key and a bad
 * signature spend the caller address's anonymous budget, so guessing
 * access key ids costs what anonymous requests cost (as a wrong API key
 * does); a good one spends the budget its principal names.
 */
export async function verifyCredential(
  ctx: AppContext,
  ip: string,
  credential: Credential,
  signing: S3Signing,
  matches: (signingKey: Buffer) => boolean,
): Promise<{ principal: S3Principal; signingKey: Buffer }> {
  const { accessKeyId, scope } = credential;
  const owner = await ctx.apiKeys.byAccessKeyId(accessKeyId);
  const signingKey = owner ? ctx.s3Credentials.signingKey(accessKeyId, owner.sealedSecret, scope) : null;
  if (!owner || signingKey === null) {
    await ctx.rateLimits.spendFor(ANONYMOUS, ip);
    throw s3Errors.invalidAccessKeyId();
  }
  if (!matches(signingKey)) {
    await ctx.rateLimits.spendFor(ANONYMOUS, ip);
    throw s3Errors.signatureDoesNotMatch();
  }
  ctx.s3Credentials.keepSigningKey(accessKeyId, owner.sealedSecret, scope, signingKey);
  const principal = s3Principal(owner, signing);
  await ctx.rateLimits.spendFor(principal, ip);
  return { principal, signingKey };
}

/** A signed request (its headers, or a presigned url): the signature read, its clock checked, every x-amz-* header it carries found among those it signed. */
export async function authenticateS3(ctx: AppContext, request: FastifyRequest, signed: SignedRequest): Promise<S3Caller> {
  const claimed = claimedSignature(signed);
  checkTime(claimed, signed.query, Date.now());
  checkSignedHeaders(claimed, signed.headers);
  const signing = claimed.presigned ? 's3-presigned-url' : 's3-signature';
  // A header signature is made per request; a presigned url is fetched again and again, so its verification is kept.
  const urlKey = claimed.presigned ? presignedUrlKey(request.url, signed, claimed) : null;
  const matches = (key: Buffer): boolean => {
    if (urlKey === null) return signatureMatches(signed, claimed, key);
    if (ctx.s3Credentials.verifiedBefore(urlKey, key)) return true;
    if (!signatureMatches(signed, claimed, key)) return false;
    ctx.s3Credentials.keepVerified(urlKey, key);
    return true;
  };
  const { principal, signingKey } = await verifyCredential(ctx, request.ip, claimed, signing, matches);
  return { principal, claimed, signingKey };
}

/**
 * Everything a presigned url's canonical request is made of: the method, the
 * url as sent (path and query, the signature's parameters among them), the
 * payload's claim and the values of the headers it signs. Two requests with
 * the same key have the same canonical request and signature.
 */
function presignedUrlKey(rawUrl: string, signed: SignedRequest, claimed: ClaimedSignature): string {
  let key = `${signed.method} ${rawUrl}\n${claimed.payloadHash}`;
  for (const name of claimed.signedHeaders) {
    const value = signed.headers[name];
    key += `\n${Array.isArray(value) ? value.join(',') : (value ?? '')}`;
  }
  return key;
}
