/**
 * Every request Pail answers 501 NotImplemented, as a table: each bucket and
 * object subresource it does not serve, and each write header asking for
 * what it cannot do, on every write that takes one. s3-operation-of.test.ts
 * classifies all of them without a server; s3-not-implemented.test.ts sends
 * one of each kind through the real listener and checks nothing changed.
 */
import { createHash, randomBytes } from 'node:crypto';

const md5Base64 = (bytes: Buffer | string) => createHash('md5').update(bytes).digest('base64');
const SSE_C_KEY = randomBytes(32);
const SSE_C = {
  'x-amz-server-side-encryption-customer-algorithm': 'AES256',
  'x-amz-server-side-encryption-customer-key': SSE_C_KEY.toString('base64'),
  'x-amz-server-side-encryption-customer-key-md5': md5Base64(SSE_C_KEY),
};
/** Each set of write headers that asks for something Pail cannot do. */
export const WRITE_HEADERS: Record<string, Record<string, string>> = {
  'SSE-S3': { 'x-amz-server-side-encryption': 'AES256' },
  'SSE-KMS': { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': 'alias/some-key' },
  'SSE-C': SSE_C,
  'bucket key': { 'x-amz-server-side-encryption-bucket-key-enabled': 'true' },
  'website redirect': { 'x-amz-website-redirect-location': '/elsewhere.html' },
  GLACIER: { 'x-amz-storage-class': 'GLACIER' },
  REDUCED_REDUNDANCY: { 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
  STANDARD_IA: { 'x-amz-storage-class': 'STANDARD_IA' },
  'ACL grant': { 'x-amz-grant-read': 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' },
  'authenticated-read ACL': { 'x-amz-acl': 'authenticated-read' },
  'public-read-write ACL': { 'x-amz-acl': 'public-read-write' },
};

const BUCKET_SUBRESOURCES = [
  'policy',
  'website',
  'encryption',
  'logging',
  'replication',
  'notification',
  'accelerate',
  'requestPayment',
  'ownershipControls',
  'intelligent-tiering',
  'analytics',
  'metrics',
  'inventory',
  'policyStatus',
];
/** A plausible body for each PUT, so a handler that reads one would get it; any other gets an empty configuration. */
export const PUT_BODIES: Record<string, string> = {
  policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: '*' }] }),
  versioning: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>',
  retention: '<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>',
  'legal-hold': '<LegalHold><Status>ON</Status></LegalHold>',
  restore: '<RestoreRequest><Days>1</Days></RestoreRequest>',
  select:
    '<SelectObjectContentRequest><Expression>select * from s3object</Expression><ExpressionType>SQL</ExpressionType><InputSerialization><CSV/></InputSerialization><OutputSerialization><CSV/></OutputSerialization></SelectObjectContentRequest>',
};

export interface Case {
  /** Which refusal it is: the same kind is refused by the same rule (operations.ts), whatever the subresource or header. */
  kind: string;
  name: string;
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

/** Every request in the sweep: the bucket holds `kept.txt` (the target of every object write) and `source.txt`. */
export function sweep(bucket: string, other: string): Case[] {
  const cases: Case[] = [];
  for (const name of BUCKET_SUBRESOURCES) {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'PUT' ? (PUT_BODIES[name] ?? '<Configuration></Configuration>') : '';
      cases.push({ kind: 'bucket subresource', name: `${method} bucket ?${name}`, method, path: `/${bucket}?${name}`, body });
    }
  }
  // Object lock is configured by GET and PUT (s3-object-lock.test.ts); it is never removed.
  cases.push({ kind: 'bucket subresource', name: 'DELETE bucket ?object-lock', method: 'DELETE', path: `/${bucket}?object-lock`, body: '' });
  const object = `/${bucket}/kept.txt`;
  cases.push(
    { kind: 'object subresource', name: 'POST object ?restore', method: 'POST', path: `${object}?restore`, body: PUT_BODIES.restore },
    { kind: 'object subresource', name: 'GET object ?torrent', method: 'GET', path: `${object}?torrent` },
    { kind: 'object subresource', name: 'POST object ?select', method: 'POST', path: `${object}?select&select-type=2`, body: PUT_BODIES.select },
  );
  for (const [what, headers] of Object.entries(WRITE_HEADERS)) {
    cases.push(
      { kind: 'PutObject over an object', name: `PutObject over kept.txt with ${what}`, method: 'PUT', path: object, body: 'overwritten', headers },
      { kind: 'PutObject of a new key', name: `PutObject of a new key with ${what}`, method: 'PUT', path: `/${bucket}/new.txt`, body: 'new bytes', headers },
      {
        kind: 'CopyObject over an object',
        name: `CopyObject over kept.txt with ${what}`,
        method: 'PUT',
        path: object,
        headers: { 'x-amz-copy-source': `/${bucket}/source.txt`, ...headers },
      },
      {
        kind: 'CopyObject to another bucket',
        name: `CopyObject to another bucket with ${what}`,
        method: 'PUT',
        path: `/${other}/copy.txt`,
        headers: { 'x-amz-copy-source': `/${bucket}/source.txt`, ...headers },
      },
      { kind: 'CreateMultipartUpload', name: `CreateMultipartUpload with ${what}`, method: 'POST', path: `${object}?uploads`, headers },
    );
  }
  return cases;
}

/** The first case of each kind. */
export const oneOfEachKind = (cases: Case[]): Case[] => cases.filter((c, index) => cases.findIndex((other) => other.kind === c.kind) === index);
