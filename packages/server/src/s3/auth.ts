/**
 * Who signed an S3 request. Every S3 signature (a request's headers, a
 * presigned url, a browser form's POST policy; SigV4 or SigV2) is checked by
 * one credential lookup, verifyCredential: the key found by its access key
 * id, the signature recomputed with the key's secret, and the request's
 * budget spent, by the principal it yields (a header signature spends the
 * owner's Developer API budget, as a request with the key itself would; a
 * presigned url or a policy the reader address's share-link budget, as a Pail
 * signed url does). Aws-chunked bodies check their chunk signatures with the
 * SigV4 signing key it verified (payload.ts).
 */
import type { FastifyRequest } from 'fastify';
import { ANONYMOUS, s3Principal, type S3Principal, type S3Signing } from '../domain/principal.js';
import type { AppContext } from '../http/context.js';
import { virtualHostBucket } from './addressing.js';
import type { ChunkSigning } from './aws-chunked.js';
import { s3Errors } from './errors.js';
import { checkTimeV2, claimedSignatureV2, isSigV2, signatureV2Matches } from './sigv2.js';
import { checkSignedHeaders, checkTime, claimedSignature, signatureMatches, UNSIGNED_PAYLOAD, type ClaimedSignature, type SignedRequest } from './sigv4.js';

export interface S3Caller {
  principal: S3Principal;
  /** What the request says of its body: the hex SHA-256, UNSIGNED-PAYLOAD, or a STREAMING-* mode (payload.ts). */
  payloadHash: string;
  /** A SigV4 header signature's key and seed, which its aws-chunked body's chunk signatures chain from; none for a presigned url or SigV2. */
  chunkSigning?: ChunkSigning;
}

/**
 * The credential a signature names: its access key id and SigV4 scope
 * (date/region/s3/aws4_request), or no scope for SigV2, which signs with the
 * secret itself.
 */
export interface Credential {
  accessKeyId: string;
  scope: string | null;
}

/**
 * The principal behind an S3 credential, once `matches` accepts the
 * signature under its signing key (SigV2: the secret), with that key. An
 * unknown key and a bad signature spend the caller address's anonymous
 * budget, so guessing access key ids costs what anonymous requests cost (as a
 * wrong API key does); a good one spends the budget its principal names.
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

/** A signed request (its headers, or a presigned url), SigV4 or (unless S3_API_SIGNATURE_V2 is off) SigV2. */
export function authenticateS3(ctx: AppContext, request: FastifyRequest, signed: SignedRequest): Promise<S3Caller> {
  if (!isSigV2(signed.headers, signed.query)) return authenticateV4(ctx, request, signed);
  if (!ctx.config.s3ApiSignatureV2) throw s3Errors.onlySigV4();
  return authenticateV2(ctx, request, signed);
}

/** SigV4: the signature read, its clock checked, every x-amz-* header it carries found among those it signed. */
async function authenticateV4(ctx: AppContext, request: FastifyRequest, signed: SignedRequest): Promise<S3Caller> {
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
  const { amzDate, scope, signature } = claimed;
  return {
    principal,
    payloadHash: claimed.payloadHash,
    ...(claimed.presigned ? {} : { chunkSigning: { key: signingKey, amzDate, scope, seedSignature: signature } }),
  };
}

/**
 * SigV2: the signature read and its clock checked. Its x-amz-* headers are all
 * signed (an x-amz-content-sha256 too, which then holds the body to its hash
 * as under SigV4); without one the body is unsigned, its Content-MD5 checked
 * when sent.
 */
async function authenticateV2(ctx: AppContext, request: FastifyRequest, signed: SignedRequest): Promise<S3Caller> {
  const claimed = claimedSignatureV2(signed.headers, signed.query);
  checkTimeV2(claimed, signed.headers, Date.now());
  const signing = claimed.expires !== null ? 's3-presigned-url' : 's3-signature';
  const asSigned = { method: signed.method, url: request.url, headers: signed.headers, hostBucket: virtualHostBucket(signed.headers, ctx.config.s3ApiDomain) };
  const credential = { accessKeyId: claimed.accessKeyId, scope: null };
  const { principal } = await verifyCredential(ctx, request.ip, credential, signing, (secret) => signatureV2Matches(asSigned, claimed, secret));
  const payloadHash = signed.headers['x-amz-content-sha256'];
  return { principal, payloadHash: typeof payloadHash === 'string' ? payloadHash : UNSIGNED_PAYLOAD };
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
