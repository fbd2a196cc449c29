/**
 * Who signed an S3 request: the signature is read, its clock checked and
 * every x-amz-* header it carries found among those it signed,
 * the key found by its access key id, the signature recomputed with the
 * key's secret; then the request spends one from the owner's Developer API
 * budget, as a request with the key itself would (a presigned url: the
 * reader address's signed-url budget, as a Pail signed url does).
 */
import type { FastifyRequest } from 'fastify';
import { ANONYMOUS, s3Principal, type S3Principal } from '../domain/principal.js';
import type { AppContext } from '../http/context.js';
import { s3Errors } from './errors.js';
import { checkSignedHeaders, checkTime, claimedSignature, signatureMatches, type ClaimedSignature, type SignedRequest } from './sigv4.js';

export interface S3Caller {
  principal: S3Principal;
  claimed: ClaimedSignature;
  /** The SigV4 signing key of the request's scope, for its chunk signatures too (aws-chunked.ts). */
  signingKey: Buffer;
}

export async function authenticateS3(ctx: AppContext, request: FastifyRequest, signed: SignedRequest): Promise<S3Caller> {
  const claimed = claimedSignature(signed);
  checkTime(claimed, signed.query, Date.now());
  checkSignedHeaders(claimed, signed.headers);
  const owner = await ctx.apiKeys.byAccessKeyId(claimed.accessKeyId);
  const signingKey = owner ? ctx.s3Credentials.signingKey(claimed.accessKeyId, owner.sealedSecret, claimed.scope) : null;
  if (!owner || signingKey === null) {
    // Guessing access key ids costs what anonymous requests cost (as a wrong API key does).
    await ctx.rateLimits.spendFor(ANONYMOUS, request.ip);
    throw s3Errors.invalidAccessKeyId();
  }
  if (!signatureMatches(signed, claimed, signingKey)) {
    await ctx.rateLimits.spendFor(ANONYMOUS, request.ip);
    throw s3Errors.signatureDoesNotMatch();
  }
  ctx.s3Credentials.keepSigningKey(claimed.accessKeyId, owner.sealedSecret, claimed.scope, signingKey);
  // A presigned url is a share link: the reader's own budget, not the owner's (RateLimits.spendFor).
  const principal = s3Principal(owner, claimed.presigned ? 's3-presigned-url' : 's3-signature');
  await ctx.rateLimits.spendFor(principal, request.ip);
  return { principal, claimed, signingKey };
}
