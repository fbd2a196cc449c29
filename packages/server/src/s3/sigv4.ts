/**
 * AWS Signature Version 4: reading the signature a request carries (the
 * Authorization header, or the X-Amz-* query of a presigned url), the clock
 * rules, and recomputing the signature with the key's secret.
 *
 * The maths is SigV4's canonical request, written here with node:crypto:
 * @smithy/signature-v4 only signs (it builds the request it signs, adding
 * headers), and checking needs the canonical request of the request as it
 * arrived. Pail owns the rules: which errors, which clock skew, how long a
 * presigned url may live.
 */
import { createHash, createHmac, hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { s3Errors } from './errors.js';
import { decodePath, queryValue, strictEncode, type QueryPairs } from './query.js';

const ALGORITHM = 'AWS4-HMAC-SHA256';
export const MAX_SKEW_MS = 15 * 60 * 1000;
export const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/** What a request claims about its signature, before any key is looked up. */
export interface ClaimedSignature {
  accessKeyId: string;
  /** X-Amz-Date: yyyymmddThhmmssZ. */
  amzDate: string;
  /** date/region/service/aws4_request */
  scope: string;
  signedHeaders: string[];
  signature: string;
  /** The hex SHA-256 of the body, or UNSIGNED-PAYLOAD. */
  payloadHash: string;
  presigned: boolean;
}

export interface SignedRequest {
  method: string;
  path: string;
  query: QueryPairs;
  headers: IncomingHttpHeaders;
}

/** Reads the claimed signature, or throws the S3 error for a missing or malformed one (SigV2 is auth.ts's to tell apart first). */
export function claimedSignature(request: SignedRequest): ClaimedSignature {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) return fromHeader(authorization, request.headers);
  if (queryValue(request.query, 'X-Amz-Algorithm') !== undefined || queryValue(request.query, 'X-Amz-Signature') !== undefined) {
    return fromQuery(request);
  }
  throw s3Errors.missingAuth();
}

function fromHeader(authorization: string, headers: IncomingHttpHeaders): ClaimedSignature {
  const match = /^\s*AWS4-HMAC-SHA256\s+/.exec(authorization);
  if (!match || match[0].length === authorization.length) {
    throw s3Errors.malformedAuth('expected AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...');
  }
  // Credential=…, SignedHeaders=…, Signature=…: the last of a repeated field counts.
  let credential: string | undefined;
  let signedHeaders: string | undefined;
  let signature: string | undefined;
  for (const part of authorization.slice(match[0].length).split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name === 'Credential') credential = part.slice(eq + 1).trim();
    else if (name === 'SignedHeaders') signedHeaders = part.slice(eq + 1).trim();
    else if (name === 'Signature') signature = part.slice(eq + 1).trim();
  }
  if (credential === undefined || signedHeaders === undefined || signature === undefined) {
    throw s3Errors.malformedAuth('Credential, SignedHeaders and Signature are all required');
  }
  const amzDate = single(headers['x-amz-date']);
  if (amzDate === undefined) throw s3Errors.malformedAuth('the x-amz-date header is required');
  const payloadHash = single(headers['x-amz-content-sha256']);
  if (payloadHash === undefined) throw s3Errors.invalidArgument('Missing required header for this request: x-amz-content-sha256');
  return claim(parseCredential(credential, amzDate), parseSignedHeaders(signedHeaders), signature, payloadHash, false);
}

/** The X-Amz-* parameters a presigned url's signature is read from. */
const PRESIGN_PARAMS = new Set([
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
  'X-Amz-Content-Sha256',
]);

function fromQuery(request: SignedRequest): ClaimedSignature {
  // One pass over the query, keeping the first value of each (as queryValue reads).
  const found = new Map<string, string>();
  for (const [name, value] of request.query) if (PRESIGN_PARAMS.has(name) && !found.has(name)) found.set(name, value);
  const param = (name: string): string => {
    const value = found.get(name);
    if (value === undefined) throw s3Errors.malformedQueryAuth(`Query-string authentication requires the ${name} parameter`);
    return value;
  };
  if (param('X-Amz-Algorithm') !== ALGORITHM) throw s3Errors.malformedQueryAuth(`X-Amz-Algorithm must be ${ALGORITHM}`);
  if (found.has('X-Amz-Security-Token')) throw s3Errors.malformedQueryAuth('Session tokens are not supported');
  const amzDate = param('X-Amz-Date');
  const credential = parseCredential(param('X-Amz-Credential'), amzDate);
  // The presigner puts the payload's claim in the query (usually UNSIGNED-PAYLOAD: the body is not known when signing).
  const payloadHash = found.get('X-Amz-Content-Sha256') ?? single(request.headers['x-amz-content-sha256']) ?? UNSIGNED_PAYLOAD;
  return claim(credential, parseSignedHeaders(param('X-Amz-SignedHeaders')), param('X-Amz-Signature'), payloadHash, true);
}

/** Built field by field: a spread followed by more fields costs V8 a slow copy, microseconds on every request. */
function claim(
  credential: Pick<ClaimedSignature, 'accessKeyId' | 'amzDate' | 'scope'>,
  signedHeaders: string[],
  signature: string,
  payloadHash: string,
  presigned: boolean,
): ClaimedSignature {
  return { accessKeyId: credential.accessKeyId, amzDate: credential.amzDate, scope: credential.scope, signedHeaders, signature, payloadHash, presigned };
}

/** `AKID/yyyymmdd/region/s3/aws4_request`: any region, the service s3, the date of X-Amz-Date. */
export function parseCredential(credential: string, amzDate: string): Pick<ClaimedSignature, 'accessKeyId' | 'amzDate' | 'scope'> {
  const [accessKeyId, date, region, service, terminator, ...rest] = credential.split('/');
  if (!accessKeyId || !date || !region || service !== 's3' || terminator !== 'aws4_request' || rest.length > 0) {
    throw s3Errors.malformedAuth('the Credential must be <access key id>/<date>/<region>/s3/aws4_request');
  }
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) throw s3Errors.malformedAuth('X-Amz-Date must be yyyymmddThhmmssZ');
  if (amzDate.slice(0, 8) !== date) throw s3Errors.malformedAuth('the Credential date does not match X-Amz-Date');
  return { accessKeyId, amzDate, scope: `${date}/${region}/${service}/${terminator}` };
}

function parseSignedHeaders(list: string): string[] {
  const names = SIGNED_HEADER_LIST.test(list) ? list.split(';') : [];
  if (!names.includes('host')) throw s3Errors.malformedAuth('SignedHeaders must be lowercase header names separated by ; and include host');
  return names;
}

const SIGNED_HEADER_LIST = /^[a-z0-9-]+(?:;[a-z0-9-]+)*$/;

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** X-Amz-Date (yyyymmddThhmmssZ, checked by parseCredential) in ms since the epoch. */
export const amzDateMs = (amzDate: string): number =>
  Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));

/**
 * The clock rules: a signed header is good for 15 minutes either side of
 * now. A presigned url lives X-Amz-Expires seconds (at most 7 days) from its
 * X-Amz-Date; a date up to 15 minutes ahead is the signer's clock skew, but
 * while it is ahead the url is not served if it would then outlive 7 days
 * from now (S3's "Request is not yet valid"), so no url is usable for more
 * than 7 days in all.
 */
export function checkTime(claimed: ClaimedSignature, query: QueryPairs, now: number): void {
  const signedAt = amzDateMs(claimed.amzDate);
  if (Number.isNaN(signedAt)) throw s3Errors.malformedAuth('X-Amz-Date is not a date');
  if (!claimed.presigned) {
    if (Math.abs(now - signedAt) > MAX_SKEW_MS) throw s3Errors.timeTooSkewed();
    return;
  }
  const expires = queryValue(query, 'X-Amz-Expires');
  if (expires === undefined || !/^\d{1,7}$/.test(expires)) throw s3Errors.malformedQueryAuth('X-Amz-Expires must be a number of seconds');
  if (Number(expires) > MAX_PRESIGNED_SECONDS) throw s3Errors.malformedQueryAuth(`X-Amz-Expires must be at most ${MAX_PRESIGNED_SECONDS} seconds (7 days)`);
  const expiresAt = signedAt + Number(expires) * 1000;
  if (signedAt - now > MAX_SKEW_MS || expiresAt - now > MAX_PRESIGNED_SECONDS * 1000) throw s3Errors.notYetValid();
  if (now > expiresAt) throw s3Errors.expired();
}

/**
 * S3 signs what it acts on: an x-amz-* header the request carries but did not
 * sign is refused (HeadersNotSigned), or a presigned PutObject signed over
 * `host` alone would become a CopyObject by adding x-amz-copy-source. The
 * payload's hash is exempt (it is in the canonical request either way: a
 * changed one fails the signature), as is, for a signed header, x-amz-date
 * (in the string to sign). Other headers (Content-Type and the like) may go
 * unsigned, as in S3.
 */
export function checkSignedHeaders(claimed: ClaimedSignature, headers: IncomingHttpHeaders): void {
  let unsigned: string[] | undefined;
  for (const name of Object.keys(headers)) {
    if (!name.startsWith('x-amz-') || name === 'x-amz-content-sha256' || (name === 'x-amz-date' && !claimed.presigned)) continue;
    if (!claimed.signedHeaders.includes(name)) (unsigned ??= []).push(name);
  }
  if (unsigned !== undefined) throw s3Errors.headersNotSigned(unsigned);
}

/** Whether the claimed signature is the one the signing key of its scope (S3CredentialSealer.signingKey) makes for this request (compared in constant time). */
export function signatureMatches(request: SignedRequest, claimed: ClaimedSignature, signingKey: Buffer): boolean {
  if (!/^[0-9a-f]{64}$/.test(claimed.signature)) return false;
  const canonical = canonicalRequest(request, claimed);
  const sent = Buffer.from(claimed.signature, 'hex');
  const matches = (canonicalHash: string) => {
    const stringToSign = `${ALGORITHM}\n${claimed.amzDate}\n${claimed.scope}\n${canonicalHash}`;
    return timingSafeEqual(createHmac('sha256', signingKey).update(stringToSign).digest(), sent);
  };
  // Node reads header values byte for byte (latin1), so this is the request as sent: UTF-8 metadata as its bytes.
  // (An ASCII request reads the same either way, and crypto.hash takes a string as UTF-8.) Only header values
  // can hold other characters: the method is a token, and the path and query are percent-encoded.
  const ascii = canonical.ascii;
  const text = canonical.text;
  if (matches(ascii ? hash('sha256', text, 'hex') : createHash('sha256').update(text, 'latin1').digest('hex'))) return true;
  // Some signers (the AWS SDK for JavaScript on Node) send a latin1 header value but sign its UTF-8: taken too.
  return !ascii && matches(hash('sha256', text, 'hex'));
}

const NON_ASCII = /[\u0080-\uffff]/;

/** SigV4's canonical request, and whether it is all ASCII. Built by concatenation: it runs on every S3 request. */
function canonicalRequest(request: SignedRequest, claimed: ClaimedSignature): { text: string; ascii: boolean } {
  // S3 signs the path encoded once, segment by segment; decoding first makes any client's encoding of it the same.
  const path = decodePath(request.path).map(strictEncode).join('/');
  let text = `${request.method}\n${path}\n${canonicalQuery(request.query, claimed.presigned)}\n`;
  let ascii = true;
  for (const name of claimed.signedHeaders) {
    const value = headerValue(request.headers[name]);
    if (ascii && NON_ASCII.test(value)) ascii = false;
    text += `${name}:${value}\n`;
  }
  text += `\n${claimed.signedHeaders.join(';')}\n${claimed.payloadHash}`;
  return { text, ascii };
}

/** The query's pairs encoded and sorted by name, then value (a presigned url's own signature left out). */
function canonicalQuery(query: QueryPairs, presigned: boolean): string {
  const pairs: [string, string][] = [];
  for (const [name, value] of query) if (!(presigned && name === 'X-Amz-Signature')) pairs.push([strictEncode(name), strictEncode(value)]);
  if (pairs.length > 1) pairs.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  let text = '';
  for (const [name, value] of pairs) text += text === '' ? `${name}=${value}` : `&${name}=${value}`;
  return text;
}

/** A header value as SigV4 signs it: trimmed, each run of whitespace one space (most values need neither). */
function headerValue(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return NEEDS_TIDYING.test(text) ? text.trim().replace(/\s+/g, ' ') : text;
}

const NEEDS_TIDYING = /^\s|\s$|\s\s|[^\S ]/;
