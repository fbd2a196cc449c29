/**
 * POST Object: a browser form upload with a signed policy (presigned POST).
 * The form's fields are read first (post-form.ts); the credential's key is
 * found and the policy's signature, expiry and conditions checked
 * (post-policy.ts) with that key's limits and rate budget, as for a signed
 * request; then the file part streams into the same uploadObject as
 * PutObject (caps, single-file cap, commit), checked against the policy's
 * content-length-range and the form's Content-MD5 and x-amz-checksum-* on its
 * way (as PutObject's body, payload.ts), so a file that fails is never stored.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { bodyThrough } from '../blob/joined-streams.js';
import { getBucketCors } from '../domain/bucket-cors.js';
import { getOwnBucketByName } from '../domain/buckets.js';
import { authorize } from '../domain/authorize.js';
import { baseName, filenamePath, parseFilename } from '../domain/objects.js';
import { uploadObject } from '../domain/uploads.js';
import type { AppContext } from '../http/context.js';
import { contentTypeFor } from '../http/uploads.js';
import { addCorsHeaders, addCorsHeadersByStorageName } from './cors-answers.js';
import { S3Error, s3Errors } from './errors.js';
import { metadataOf } from './metadata.js';
import { checkedTags, tagsFromXml } from './tagging.js';
import { checkLockedWrite, requestedLockOf } from './object-lock.js';
import { bucketRules } from '../domain/bucket-rules.js';
import { checkObjectAcl, OBJECT_CANNED_ACLS } from './object-acl.js';
import { checksumHeaders } from './object-reads.js';
import { verifyCredential } from './auth.js';
import { refuseUnsupportedWrite, S3_ACTION } from './operations.js';
import { checkedAgainst } from './payload.js';
import { readPostForm, type PostForm } from './post-form.js';
import { checkConditions, parsePolicy, policySignatureMatches, type PostPolicy } from './post-policy.js';
import { splitUrl } from './query.js';
import { policySignatureV2Matches } from './sigv2.js';
import { amzDateMs, parseCredential } from './sigv4.js';
import { xmlDocument } from './xml.js';

const tooLarge = () => new S3Error('EntityTooLarge', 400, 'Your proposed upload exceeds the maximum allowed size');
const tooSmall = () => new S3Error('EntityTooSmall', 400, 'Your proposed upload is smaller than the minimum allowed size');

export async function postObject(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, bucketName: string): Promise<FastifyReply> {
  const form = await readPostForm(request).catch(async (error: unknown) => {
    await addCorsHeadersByStorageName(ctx, request, reply, bucketName);
    throw error;
  });
  let corsSet = false;
  try {
    const { principal, policy } = await authenticateForm(ctx, request, form);
    authorize(principal, S3_ACTION.PutObject);
    const bucket = await getOwnBucketByName(ctx.db, principal, bucketName, S3_ACTION.PutObject);
    await addCorsHeaders(request, reply, () => getBucketCors(ctx.db, bucket.id));
    corsSet = true;
    const key = (form.fields.get('key') ?? '').replaceAll('${filename}', baseName(form.file.filename));
    if (key === '') throw s3Errors.invalidArgument("Bucket POST must contain a field named 'key'.");
    const fields = new Map(form.fields).set('key', key);
    checkConditions(policy, fields, (name) => name === bucket.name || name === bucket.storage_name);
    const bucketField = fields.get('bucket');
    if (bucketField !== undefined && bucketField !== bucket.name && bucketField !== bucket.storage_name) {
      throw s3Errors.invalidArgument('The bucket field does not name the bucket posted to');
    }
    const acl = fields.get('acl');
    // An object has its bucket's visibility (as with PutObject): only the ACL it gets anyway is taken (object-acl.ts).
    if (acl !== undefined && !OBJECT_CANNED_ACLS.has(acl)) throw s3Errors.notImplemented(`acl ${acl}`);
    checkObjectAcl(acl, bucket.public === 1);
    // The fields PutObject would have as headers get its refusals (encryption, storage class) and its lock.
    refuseUnsupportedWrite(Object.fromEntries(fields));
    const lock = requestedLockOf(Object.fromEntries(fields));
    checkLockedWrite({}, lock, (await bucketRules(ctx.storage, bucket.id)).lock, false);
    // A form's tags are a tagging field holding a Tagging document.
    const tagging = fields.get('tagging') ?? '';
    const tags = tagging === '' ? undefined : checkedTags(tagsFromXml(tagging));
    const filename = parseFilename(key);
    const checked = lengthChecked(policy);
    // Content-MD5 and x-amz-checksum-* fields are verified as PutObject's headers are; a verified checksum is kept with the object.
    const verified = checkedAgainst(bodyThrough(form.file.stream, checked.stream), Object.fromEntries(fields));
    await uploadObject(ctx.storage, {
      owner: principal.user,
      bucket: { id: bucket.id, owner_id: bucket.owner_id, storage_name: bucket.storage_name },
      filename,
      body: verified.stream,
      contentType: contentTypeFor(filename, fields.get('content-type')),
      metadata: metadataOf(Object.fromEntries(fields)),
      tags,
      lock,
      etag: checked.md5Hex,
      ...(verified.checksums ? { checksums: verified.checksums } : {}),
      ...(policy.length ? { maxBytes: policy.length.max } : {}),
      operation: 'PostObject',
    });
    await form.finished;
    reply.headers(checksumHeaders(verified.checksums?.()));
    return answer(request, reply, fields, { bucket: bucketName, key, etag: `"${checked.md5Hex()}"` });
  } catch (error) {
    // What is left of the body is read and dropped, so the connection can carry the answer.
    form.file.stream.resume();
    if (!corsSet) await addCorsHeadersByStorageName(ctx, request, reply, bucketName);
    throw error;
  }
}

/**
 * The key that signed the policy, found by the same credential lookup as a signed request's (auth.ts): a policy is handed to browsers, as a presigned url is.
 * SigV4 (x-amz-algorithm, x-amz-credential, x-amz-date, x-amz-signature) or, unless S3_API_SIGNATURE_V2 is off, SigV2 (AWSAccessKeyId, signature).
 */
async function authenticateForm(ctx: AppContext, request: FastifyRequest, form: PostForm) {
  const field = (name: string): string => {
    const value = form.fields.get(name);
    if (value === undefined) throw s3Errors.invalidArgument(`Bucket POST must contain a field named '${name}'.`);
    return value;
  };
  const sigV2 = form.fields.has('awsaccesskeyid') || form.fields.has('signature');
  if (sigV2 && !ctx.config.s3ApiSignatureV2) throw s3Errors.onlySigV4();
  if (form.fields.has('x-amz-security-token')) throw s3Errors.notImplemented('x-amz-security-token');
  const policyBase64 = field('policy');
  if (sigV2) {
    if (['x-amz-algorithm', 'x-amz-credential', 'x-amz-signature'].some((name) => form.fields.has(name))) {
      throw s3Errors.invalidArgument(
        'A form is signed one way: AWSAccessKeyId and signature (SigV2), or x-amz-algorithm, x-amz-credential and x-amz-signature (SigV4)',
      );
    }
    const signature = field('signature');
    const credential = { accessKeyId: field('awsaccesskeyid'), scope: null };
    const matches = (secret: Buffer) => policySignatureV2Matches(policyBase64, signature, secret);
    const { principal } = await verifyCredential(ctx, request.ip, credential, 's3-post-policy', matches);
    // SigV2 names no signing time: the policy may live 7 days from now at most, as a presigned url.
    const now = Date.now();
    return { principal, policy: parsePolicy(policyBase64, now, now) };
  }
  if (field('x-amz-algorithm') !== 'AWS4-HMAC-SHA256') throw s3Errors.invalidArgument('x-amz-algorithm must be AWS4-HMAC-SHA256');
  const credential = parseCredential(field('x-amz-credential'), field('x-amz-date'));
  const signature = field('x-amz-signature');
  const matches = (signingKey: Buffer) => policySignatureMatches(policyBase64, signature, signingKey);
  const { principal } = await verifyCredential(ctx, request.ip, credential, 's3-post-policy', matches);
  const policy: PostPolicy = parsePolicy(policyBase64, Date.now(), amzDateMs(credential.amzDate));
  return { principal, policy };
}

/** Counts and hashes the file as it passes; past the range's maximum, or short of its minimum at the end, the stream fails and nothing is committed. */
function lengthChecked(policy: PostPolicy): { stream: Transform; md5Hex: () => string } {
  const md5 = createHash('md5');
  let size = 0;
  let hex: string | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (policy.length && size > policy.length.max) return done(tooLarge());
      md5.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      done(policy.length && size < policy.length.min ? tooSmall() : null);
    },
  });
  return { stream, md5Hex: () => (hex ??= md5.digest('hex')) };
}

/** success_action_redirect (303 with bucket, key and etag), else success_action_status 200 or 201 (with a PostResponse), else 204. */
function answer(request: FastifyRequest, reply: FastifyReply, fields: ReadonlyMap<string, string>, result: { bucket: string; key: string; etag: string }) {
  const host = request.headers.host ?? 'localhost';
  const location = `${request.protocol}://${host}${splitUrl(request.url).path.replace(/\/$/, '')}/${filenamePath(result.key)}`;
  reply.header('etag', result.etag).header('location', location);
  const redirect = redirectTo(fields.get('success_action_redirect') ?? fields.get('redirect'));
  if (redirect !== undefined) {
    for (const [name, value] of Object.entries(result)) redirect.searchParams.set(name, value);
    return reply.code(303).header('location', redirect.toString()).send();
  }
  const status = fields.get('success_action_status');
  if (status === '201') {
    const body = xmlDocument('PostResponse', { Location: location, Bucket: result.bucket, Key: result.key, ETag: result.etag }, false);
    return reply.code(201).header('content-type', 'application/xml').send(body);
  }
  return reply.code(status === '200' ? 200 : 204).send();
}

/** An absolute http(s) url, or undefined (S3 ignores a redirect it cannot use and answers the status). */
function redirectTo(value: string | undefined): URL | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
