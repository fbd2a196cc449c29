/**
 * Which S3 operation a request is (s3/operations.ts), from a table of
 * requests, with no server: each of the operations Pail serves, the query
 * parameters each takes, and every request it refuses as 501 NotImplemented
 * (helpers/s3-unsupported.ts), read as the listener reads them (splitUrl,
 * addressOf). The listener asks operationOf before it calls any handler, so a
 * refusal here is a request no handler ever sees.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { addressOf } from '../src/s3/addressing.js';
import { S3Error } from '../src/s3/errors.js';
import { isPostObject, operationOf, refuseUnsupportedWrite, type S3Operation } from '../src/s3/operations.js';
import { splitUrl } from '../src/s3/query.js';
import { sweep, WRITE_HEADERS } from './helpers/s3-unsupported.js';

const DOMAIN = 's3.localtest';

/** operationOf for a request as it arrives: method, path with its query, and headers. */
function classify(method: string, url: string, headers: IncomingHttpHeaders = {}): S3Operation {
  const { path, query } = splitUrl(url);
  const { bucket, key } = addressOf(path, { host: '127.0.0.1:9000', ...headers }, DOMAIN);
  return operationOf(method, bucket, key, query, { host: '127.0.0.1:9000', ...headers });
}

/** The refusal a request gets, or what it was taken for instead. */
function refusal(method: string, url: string, headers: IncomingHttpHeaders = {}): { code: string; status: number; message: string } | S3Operation {
  try {
    return classify(method, url, headers);
  } catch (error) {
    if (!(error instanceof S3Error)) throw error;
    return { code: error.code, status: error.status, message: error.message };
  }
}

const notImplemented = (message: string) => ({ code: 'NotImplemented', status: 501, message: `${message} is not implemented by Pail yet` });

const COPY = { 'x-amz-copy-source': '/b/source.txt' };
const PRESIGNED =
  'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Expires=600&X-Amz-SignedHeaders=host&X-Amz-Signature=abc';

/** [method, url, headers, operation]: every operation Pail serves, with the parameters each understands. */
const SERVED: [string, string, IncomingHttpHeaders, S3Operation][] = [
  ['GET', '/', {}, 'ListBuckets'],
  ['GET', '/?max-buckets=1&continuation-token=t&prefix=p&bucket-region=us-east-1', {}, 'ListBuckets'],
  ['GET', '/?x-id=ListBuckets', {}, 'ListBuckets'],
  ['PUT', '/b', {}, 'CreateBucket'],
  ['HEAD', '/b', {}, 'HeadBucket'],
  ['DELETE', '/b', {}, 'DeleteBucket'],
  ['GET', '/b?location', {}, 'GetBucketLocation'],
  ['GET', '/b?versioning', {}, 'GetBucketVersioning'],
  ['PUT', '/b?versioning', {}, 'PutBucketVersioning'],
  ['GET', '/b/k.txt?versionId=v', {}, 'GetObject'],
  ['DELETE', '/b/k.txt?versionId=v', {}, 'DeleteObject'],
  ['GET', '/b/k.txt?tagging&versionId=v', {}, 'GetObjectTagging'],
  ['PUT', '/b/k.txt?tagging&versionId=v', {}, 'PutObjectTagging'],
  ['DELETE', '/b/k.txt?versionId=v&tagging', {}, 'DeleteObjectTagging'],
  ['GET', '/b/k.txt?acl&versionId=v', {}, 'GetObjectAcl'],
  ['PUT', '/b/k.txt?acl&versionId=v', {}, 'PutObjectAcl'],
  ['GET', '/b?acl', {}, 'GetBucketAcl'],
  ['PUT', '/b?acl', {}, 'PutBucketAcl'],
  ['GET', '/b?cors', {}, 'GetBucketCors'],
  ['PUT', '/b?cors', {}, 'PutBucketCors'],
  ['DELETE', '/b?cors', {}, 'DeleteBucketCors'],
  ['GET', '/b?publicAccessBlock', {}, 'GetPublicAccessBlock'],
  ['PUT', '/b?publicAccessBlock', {}, 'PutPublicAccessBlock'],
  ['DELETE', '/b?publicAccessBlock', {}, 'DeletePublicAccessBlock'],
  ['GET', '/b?lifecycle', {}, 'GetBucketLifecycleConfiguration'],
  ['PUT', '/b?lifecycle', {}, 'PutBucketLifecycleConfiguration'],
  ['DELETE', '/b?lifecycle', {}, 'DeleteBucketLifecycle'],
  ['GET', '/b', {}, 'ListObjects'],
  ['GET', '/b?prefix=a%2F&delimiter=%2F&marker=a%2Fb&max-keys=10&encoding-type=url', {}, 'ListObjects'],
  ['GET', '/b?list-type=2', {}, 'ListObjectsV2'],
  ['GET', '/b?list-type=2&prefix=p&delimiter=%2F&max-keys=5&continuation-token=t&start-after=s&encoding-type=url&fetch-owner=true', {}, 'ListObjectsV2'],
  ['GET', '/b?versions', {}, 'ListObjectVersions'],
  ['GET', '/b?versions&prefix=p&delimiter=%2F&key-marker=k&version-id-marker=null&max-keys=3&encoding-type=url', {}, 'ListObjectVersions'],
  ['GET', '/b?uploads', {}, 'ListMultipartUploads'],
  ['GET', '/b?uploads&prefix=p&delimiter=%2F&key-marker=k&upload-id-marker=u&max-uploads=2&encoding-type=url', {}, 'ListMultipartUploads'],
  ['POST', '/b?delete', {}, 'DeleteObjects'],
  ['PUT', '/b/dir/k.txt', {}, 'PutObject'],
  ['PUT', '/b/k.txt', { 'x-amz-storage-class': 'STANDARD', 'x-amz-tagging': '', 'x-amz-acl': 'private' }, 'PutObject'],
  ['PUT', '/b/k.txt', { 'x-amz-acl': 'bucket-owner-full-control' }, 'PutObject'],
  ['PUT', '/b/k.txt', COPY, 'CopyObject'],
  ['PUT', '/b/k.txt', { ...COPY, 'x-amz-tagging-directive': 'COPY' }, 'CopyObject'],
  ['GET', '/b/k.txt', {}, 'GetObject'],
  ['GET', '/b/k.txt?x-amz-checksum-mode=ENABLED&response-content-type=text%2Fplain&response-content-disposition=inline', {}, 'GetObject'],
  ['GET', `/b/k.txt?response-cache-control=no-store&response-content-encoding=gzip&response-content-language=en&response-expires=0`, {}, 'GetObject'],
  ['GET', `/b/k.txt?${PRESIGNED}`, {}, 'GetObject'],
  ['GET', '/b/k.txt?x-id=GetObject', {}, 'GetObject'],
  ['HEAD', '/b/k.txt', {}, 'HeadObject'],
  ['HEAD', '/b/k.txt?response-content-type=text%2Fplain', {}, 'HeadObject'],
  ['DELETE', '/b/k.txt', {}, 'DeleteObject'],
  ['GET', '/b/k.txt?acl', {}, 'GetObjectAcl'],
  ['GET', '/b/k.txt?attributes&versionId=v', { 'x-amz-object-attributes': 'ETag' }, 'GetObjectAttributes'],
  ['PUT', '/b/k.txt?acl', {}, 'PutObjectAcl'],
  ['PUT', '/b/k.txt?acl', { 'x-amz-acl': 'public-read' }, 'PutObjectAcl'],
  ['GET', '/b/k.txt?attributes', { 'x-amz-object-attributes': 'ETag,ObjectSize' }, 'GetObjectAttributes'],
  ['GET', '/b/k.txt?partNumber=2', {}, 'GetObject'],
  ['HEAD', '/b/k.txt?partNumber=1&x-amz-checksum-mode=ENABLED', {}, 'HeadObject'],
  ['GET', '/b/k.txt?tagging', {}, 'GetObjectTagging'],
  ['PUT', '/b/k.txt?tagging', {}, 'PutObjectTagging'],
  ['DELETE', '/b/k.txt?tagging', {}, 'DeleteObjectTagging'],
  ['GET', '/b?tagging', {}, 'GetBucketTagging'],
  ['PUT', '/b?tagging', {}, 'PutBucketTagging'],
  ['DELETE', '/b?tagging', {}, 'DeleteBucketTagging'],
  ['PUT', '/b/k.txt', { 'x-amz-tagging': 'a=b' }, 'PutObject'],
  ['PUT', '/b/k.txt', { ...COPY, 'x-amz-tagging-directive': 'REPLACE', 'x-amz-tagging': 'a=b' }, 'CopyObject'],
  ['POST', '/b/k.txt?uploads', { 'x-amz-tagging': 'a=b' }, 'CreateMultipartUpload'],
  ['POST', '/b/k.txt?uploads', {}, 'CreateMultipartUpload'],
  ['POST', '/b/k.txt?uploads', { 'x-amz-checksum-algorithm': 'CRC32' }, 'CreateMultipartUpload'],
  ['PUT', '/b/k.txt?partNumber=1&uploadId=u', {}, 'UploadPart'],
  ['PUT', '/b/k.txt?uploadId=u&partNumber=1', {}, 'UploadPart'],
  ['PUT', '/b/k.txt?partNumber=2&uploadId=u', COPY, 'UploadPartCopy'],
  ['POST', '/b/k.txt?uploadId=u', {}, 'CompleteMultipartUpload'],
  ['DELETE', '/b/k.txt?uploadId=u', {}, 'AbortMultipartUpload'],
  ['GET', '/b/k.txt?uploadId=u', {}, 'ListParts'],
  ['GET', '/b/k.txt?uploadId=u&max-parts=5&part-number-marker=2&encoding-type=url', {}, 'ListParts'],
  // Virtual-hosted style: the bucket is in Host, the whole path is the key.
  ['PUT', '/dir/k.txt', { host: `b.${DOMAIN}:9000` }, 'PutObject'],
  ['GET', '/?list-type=2', { host: `b.${DOMAIN}:9000` }, 'ListObjectsV2'],
  ['GET', '/b/k.txt', { host: `${DOMAIN}:9000` }, 'GetObject'],
];

/** [method, url, headers, refusal message]: requests that look like a served operation but ask for more. */
const REFUSED: [string, string, IncomingHttpHeaders, string][] = [
  ['GET', '/?marker=a', {}, 'GET with ?marker'],
  ['PUT', '/', {}, 'PUT on the service'],
  ['POST', '/b', {}, 'POST on a bucket'],
  ['GET', '/b?list-type=1', {}, 'GET with ?list-type'],
  ['GET', '/b?list-type=2&marker=m', {}, 'GET with ?list-type&marker'],
  ['GET', '/b?uploads&marker=m', {}, 'GET with ?uploads&marker'],
  ['HEAD', '/b?acl', {}, 'HEAD with ?acl'],
  ['GET', '/b?location&acl', {}, 'GET with ?location&acl'],
  ['HEAD', '/b?publicAccessBlock', {}, 'HEAD with ?publicAccessBlock'],
  ['GET', '/b/k.txt?publicAccessBlock', {}, 'GET with ?publicAccessBlock'],
  ['PUT', '/b/k.txt?acl&prefix=p', {}, 'PUT with ?acl&prefix'],
  ['GET', '/b/k.txt?attributes&prefix=p', {}, 'GET with ?attributes&prefix'],
  ['GET', '/b/k.txt?partNumber=1&uploadId=u', {}, 'GET with ?partNumber&uploadId'],
  ['PUT', '/b/k.txt?tagging&versionId=v&acl', {}, 'PUT with ?tagging&versionId&acl'],
  ['PUT', '/b/k.txt?partNumber=1', {}, 'PUT with ?partNumber'],
  ['PUT', '/b/k.txt?uploadId=u', {}, 'PUT with ?uploadId'],
  ['PUT', '/b/k.txt?partNumber=1&uploadId=u&versionId=v', {}, 'PUT with ?partNumber&uploadId&versionId'],
  ['POST', '/b/k.txt', {}, 'POST on an object'],
  ['GET', '/b/k.txt?uploadId=u&prefix=p', {}, 'GET with ?uploadId&prefix'],
  ['POST', '/b/k.txt?uploads', { 'x-amz-server-side-encryption': 'AES256' }, 'x-amz-server-side-encryption'],
  ['PUT', '/b/k.txt', { 'x-amz-acl': 'public-read-write' }, 'x-amz-acl: public-read-write on an object'],
  ['PUT', '/b/k.txt', { 'x-amz-grant-read': 'id=someone' }, 'x-amz-grant-read (ACL grants)'],
  ['PUT', '/b/k.txt', { 'x-amz-storage-class': 'GLACIER' }, 'x-amz-storage-class GLACIER'],
  ['PUT', '/b/k.txt', { 'x-amz-website-redirect-location': '/x' }, 'x-amz-website-redirect-location'],
];

describe('operationOf', () => {
  it('names every operation Pail serves, from the method, path, query and headers', () => {
    const served = SERVED.map(([method, url, headers]) => [method, url, refusal(method, url, headers)]);
    expect(served).toEqual(SERVED.map(([method, url, , operation]) => [method, url, operation]));
    const named = new Set(SERVED.map(([, , , operation]) => operation));
    expect(named.size).toBe(43);
  });

  it('refuses what asks for more than an operation takes, naming it', () => {
    const refused = REFUSED.map(([method, url, headers]) => [method, url, refusal(method, url, headers)]);
    expect(refused).toEqual(REFUSED.map(([method, url, , message]) => [method, url, notImplemented(message)]));
  });

  it('refuses every request of the 501 sweep (each subresource, and each unsupported write header on every write) as NotImplemented', () => {
    const cases = sweep('ni-bucket', 'ni-other');
    expect(cases.length).toBeGreaterThan(100);
    const wrong = cases
      .map((request) => ({ name: request.name, answer: refusal(request.method, request.path, request.headers) }))
      .filter(({ answer }) => typeof answer === 'string' || answer.status !== 501 || answer.code !== 'NotImplemented');
    expect(wrong).toEqual([]);
    for (const request of cases) {
      const answer = refusal(request.method, request.path, request.headers);
      expect(typeof answer === 'string' ? answer : answer.message).toMatch(/^[^<]+ is not implemented by Pail yet$/);
    }
  });
});

describe("refuseUnsupportedWrite (a new object's headers, or POST Object's fields)", () => {
  it('refuses each set of write headers asking for what Pail cannot do', () => {
    for (const [what, headers] of Object.entries(WRITE_HEADERS)) {
      expect({ what, thrown: thrownBy(() => refuseUnsupportedWrite(headers)) }).toMatchObject({ what, thrown: { code: 'NotImplemented', status: 501 } });
    }
  });

  it('takes what asks for nothing Pail lacks: STANDARD, tags, the canned ACLs an object may have, and headers left out', () => {
    for (const headers of [
      {},
      { 'x-amz-storage-class': 'STANDARD' },
      { 'x-amz-tagging': '' },
      { 'x-amz-tagging': 'a=b&c' },
      { 'x-amz-acl': 'private' },
      { 'x-amz-acl': 'public-read' },
      { 'x-amz-acl': 'bucket-owner-full-control' },
      { 'x-amz-server-side-encryption': undefined, 'x-amz-grant-read': undefined },
    ]) {
      expect(thrownBy(() => refuseUnsupportedWrite(headers))).toBeUndefined();
    }
  });
});

describe('isPostObject (a browser form upload)', () => {
  const form = { 'content-type': 'multipart/form-data; boundary=x' };
  it('is a POST of multipart/form-data to a bucket, with no query and no Authorization', () => {
    expect(isPostObject('POST', 'b', '', [], form)).toBe(true);
    expect(isPostObject('POST', 'b', '', [], { 'content-type': 'Multipart/Form-Data ; boundary=x' })).toBe(true);
    expect(isPostObject('PUT', 'b', '', [], form)).toBe(false);
    expect(isPostObject('POST', '', '', [], form)).toBe(false);
    expect(isPostObject('POST', 'b', 'k.txt', [], form)).toBe(false);
    expect(isPostObject('POST', 'b', '', [['delete', '']], form)).toBe(false);
    expect(isPostObject('POST', 'b', '', [], { ...form, authorization: 'AWS4-HMAC-SHA256 ...' })).toBe(false);
    expect(isPostObject('POST', 'b', '', [], { 'content-type': 'multipart/form-data' })).toBe(false);
    expect(isPostObject('POST', 'b', '', [], { 'content-type': 'application/xml' })).toBe(false);
  });
});

function thrownBy(run: () => void): { code: string; status: number } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!(error instanceof S3Error)) throw error;
    return { code: error.code, status: error.status };
  }
}
