/**
 * AWS Signature Version 2, as older clients still sign (AWS CLI v1's
 * `s3 presign`, s3cmd with signature_v2, boto's signature_version 's3'), and
 * as MinIO and Ceph accept it: the Authorization header (`AWS id:signature`),
 * a presigned url (AWSAccessKeyId, Expires, Signature), and a POST policy
 * (post-object.ts). The signature is the base64 HMAC-SHA1, keyed with the
 * secret, of Method, Content-MD5, Content-Type, Date (Expires when presigned),
 * every x-amz-* header and the resource (its bucket, key and sub-resources).
 * Every x-amz-* header being signed, one added to a signed request fails the
 * signature, as SigV4's HeadersNotSigned rule would refuse it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { s3Errors } from './errors.js';
import { queryValue, type QueryPairs } from './query.js';
import { amzDateMs, MAX_PRESIGNED_SECONDS, MAX_SKEW_MS } from './sigv4.js';

/** What a SigV2 request claims, before any key is looked up. */
export interface ClaimedSignatureV2 {
  accessKeyId: string;
  /** Base64 HMAC-SHA1. */
  signature: string;
  /** A presigned url's Expires (seconds since the epoch); null for the header form. */
  expires: string | null;
}

/** A request as SigV2 signs it: the url as sent (its path still encoded), and the bucket its Host names, if any. */
export interface RequestV2 {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Virtual-hosted style: the bucket a `<bucket>.<S3_API_DOMAIN>` Host names, which the resource starts with. */
  hostBucket: string | null;
}

/**
 * The query parameters that are part of the resource signed (the rest are
 * not), as botocore, s3cmd and MinIO list them.
 */
const SUB_RESOURCES = new Set(
  (
    'accelerate acl analytics cors defaultObjectAcl delete encryption inventory legal-hold lifecycle location logging metrics ' +
    'notification object-lock partNumber policy replication requestPayment restore retention select select-type storageClass ' +
    'tagging torrent uploadId uploads versionId versioning versions website response-cache-control response-content-disposition ' +
    'response-content-encoding response-content-language response-content-type response-expires'
  ).split(' '),
);

/** Whether a request is signed with SigV2: `Authorization: AWS …`, or a presigned url's AWSAccessKeyId and Signature (and no X-Amz-* of SigV4's). */
export function isSigV2(headers: IncomingHttpHeaders, query: QueryPairs): boolean {
  const authorization = headers.authorization;
  if (authorization !== undefined) return /^AWS(\s|$)/.test(authorization);
  if (queryValue(query, 'X-Amz-Algorithm') !== undefined || queryValue(query, 'X-Amz-Signature') !== undefined) return false;
  return queryValue(query, 'Signature') !== undefined && queryValue(query, 'AWSAccessKeyId') !== undefined;
}

/** Reads the claimed signature (isSigV2 said there is one), or throws S3's error for a malformed one. */
export function claimedSignatureV2(headers: IncomingHttpHeaders, query: QueryPairs): ClaimedSignatureV2 {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^AWS\s+([^:\s]+):(\S+)$/.exec(authorization.trim());
    if (!match) throw s3Errors.invalidArgument('AWS authorization header is invalid.  Expected AwsAccessKeyId:signature');
    return { accessKeyId: match[1]!, signature: match[2]!, expires: null };
  }
  const expires = queryValue(query, 'Expires');
  if (expires === undefined) throw s3Errors.accessDenied('Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters');
  if (queryValue(query, 'x-amz-security-token') !== undefined) throw s3Errors.malformedQueryAuth('Session tokens are not supported');
  return { accessKeyId: queryValue(query, 'AWSAccessKeyId')!, signature: queryValue(query, 'Signature')!, expires };
}

/**
 * The clock rules, as SigV4's: a signed header's date (x-amz-date, else Date)
 * is good for 15 minutes either side of now; a presigned url is served until
 * its Expires, which may be at most 7 days (and the clock skew) ahead, so no
 * url is usable for longer than a SigV4 one.
 */
export function checkTimeV2(claimed: ClaimedSignatureV2, headers: IncomingHttpHeaders, now: number): void {
  if (claimed.expires !== null) {
    if (!/^\d{1,12}$/.test(claimed.expires)) throw s3Errors.accessDenied('Invalid date (should be seconds since epoch): ' + claimed.expires);
    const expiresAt = Number(claimed.expires) * 1000;
    if (now > expiresAt) throw s3Errors.expired();
    if (expiresAt - now > MAX_PRESIGNED_SECONDS * 1000 + MAX_SKEW_MS) {
      throw s3Errors.malformedQueryAuth(`Expires must be at most ${MAX_PRESIGNED_SECONDS} seconds (7 days) from now`);
    }
    return;
  }
  const amzDate = single(headers['x-amz-date']);
  const signedAt = dateMs(amzDate ?? single(headers.date));
  if (signedAt === null) throw s3Errors.accessDenied('AWS authentication requires a valid Date or x-amz-date header');
  if (Math.abs(now - signedAt) > MAX_SKEW_MS) throw s3Errors.timeTooSkewed();
}

/** An HTTP date (or SigV4's yyyymmddThhmmssZ, which some clients send as x-amz-date) in ms; null when it is none, or before 1970. */
function dateMs(value: string | undefined): number | null {
  if (value === undefined) return null;
  const ms = /^\d{8}T\d{6}Z$/.test(value) ? amzDateMs(value) : Date.parse(value);
  return Number.isNaN(ms) || ms < 0 ? null : ms;
}

/**
 * Whether the claimed signature is the secret's for this request (compared in
 * constant time). Clients differ where the standard leaves room, so each
 * reading a client is known to sign is tried: the Date line empty when
 * x-amz-date is sent (the standard) or Date's value (botocore, MinIO), and
 * the resource's readings (resources). Each names the same request: none
 * can make a signature for one request good for another.
 */
export function signatureV2Matches(request: RequestV2, claimed: ClaimedSignatureV2, secret: Buffer): boolean {
  const sent = Buffer.from(claimed.signature, 'base64');
  if (sent.length !== 20) return false;
  for (const stringToSign of stringsToSign(request, claimed)) {
    if (timingSafeEqual(createHmac('sha1', secret).update(stringToSign).digest(), sent)) return true;
  }
  return false;
}

/** Whether `signature` is the base64 HMAC-SHA1 of the base64 policy under the secret (a POST policy's SigV2). */
export function policySignatureV2Matches(policyBase64: string, signature: string, secret: Buffer): boolean {
  const sent = Buffer.from(signature, 'base64');
  return sent.length === 20 && timingSafeEqual(createHmac('sha1', secret).update(policyBase64).digest(), sent);
}

function stringsToSign(request: RequestV2, claimed: ClaimedSignatureV2): Buffer[] {
  const { headers } = request;
  const dates =
    claimed.expires !== null ? [claimed.expires] : headers['x-amz-date'] !== undefined ? ['', single(headers.date) ?? ''] : [single(headers.date) ?? ''];
  const amzHeaders = Object.keys(headers)
    .filter((name) => name.startsWith('x-amz-'))
    .sort()
    .map((name) => `${name}:${headerValue(headers[name])}\n`)
    .join('');
  const candidates = new Map<string, Buffer>();
  for (const date of new Set(dates)) {
    // Node reads header values byte for byte (latin1): so they are signed as their bytes; the resource, decoded, as UTF-8.
    const head = Buffer.from(
      `${request.method}\n${headerValue(headers['content-md5'])}\n${headerValue(headers['content-type'])}\n${date}\n${amzHeaders}`,
      'latin1',
    );
    for (const resource of resources(request)) candidates.set(`${date}\n${resource}`, Buffer.concat([head, Buffer.from(resource, 'utf8')]));
  }
  return [...candidates.values()];
}

/**
 * The canonical resource: /bucket/key, then the sub-resources sorted by name
 * (`?acl`, `?partNumber=2&uploadId=…`), in each reading clients sign: the path
 * as sent or decoded (unless decoding makes a `?` of it, which would read as
 * a sub-resource), a bucket with or without its trailing slash, a sub-resource
 * as sent (`acl=`) or bare. And botocore's own: it signs the query its
 * operation's url starts with (`?acl`, `?uploads`, `?list-type=2`) as part of
 * the path, then the sub-resources again (`/bucket?acl?acl`).
 */
function resources(request: RequestV2): Set<string> {
  const mark = request.url.indexOf('?');
  const path = mark === -1 ? request.url : request.url.slice(0, mark);
  const items = mark === -1 ? [] : request.url.slice(mark + 1).split('&');
  const prefix = request.hostBucket === null ? '' : `/${request.hostBucket}`;
  const subResources = items
    .map((part) => {
      const eq = part.indexOf('=');
      return eq === -1 ? { name: decode(part), value: null } : { name: decode(part.slice(0, eq)), value: decode(part.slice(eq + 1)) };
    })
    .filter(({ name }) => SUB_RESOURCES.has(name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const asSent = subResources.map(({ name, value }) => (value === null ? name : `${name}=${value}`)).join('&');
  const bare = subResources.map(({ name, value }) => (value === null || value === '' ? name : `${name}=${value}`)).join('&');
  const queries = new Set([asSent, bare].map((query) => (query === '' ? '' : `?${query}`)));
  const first = items[0];
  if (first !== undefined && first !== '') queries.add(`?${first}${asSent === '' ? '' : `?${asSent}`}`);
  const decoded = decode(path);
  const out = new Set<string>();
  for (const resourcePath of decoded.includes('?') ? [path] : [path, decoded]) {
    const full = `${prefix}${resourcePath}`;
    // A bucket is `/bucket/` to botocore (which sends `/bucket`, path style) and `/bucket` to others.
    const named = /^\/[^/]+\/?$/.test(full) ? [full.replace(/\/$/, ''), full.replace(/\/?$/, '/')] : [full];
    for (const name of named) for (const query of queries) out.add(`${name}${query}`);
  }
  return out;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
const headerValue = (value: string | string[] | undefined): string => (Array.isArray(value) ? value.join(',') : (value ?? '')).trim();
