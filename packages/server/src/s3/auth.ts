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
  const { principal, signingKey } = await verifyCredential(ctx, request.ip, claimed, signing, (key) => signatureMatches(signed, claimed, key));
  return { principal, claimed, signingKey };
}
