/**
 * ACLs as Pail has them: a bucket is private or public-read (its
 * visibility, the same setting as the Pail API's POST /:id/visibility), and
 * an object has its bucket's. Only the two canned ACLs are understood;
 * anything else (grants to other accounts, write grants, object ACLs of
 * their own) is 501, never a silent success. Versioning lives here too: it
 * is never enabled, and says so with an empty configuration.
 */
import { setVisibility } from '../domain/buckets.js';
import { findReadable } from '../domain/objects.js';
import type { S3Caller } from './auth.js';
import { s3Errors } from './errors.js';
import { ownBucket, ownerXml, sendXml, type Handler } from './handler-support.js';
import { xmlBody } from './payload.js';
import { parseXml, type XmlElement } from './xml.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const ALL_USERS = 'http://acs.amazonaws.com/groups/global/AllUsers';

type CannedAcl = 'private' | 'public-read';

function policyXml(caller: S3Caller, acl: CannedAcl): XmlElement {
  const owner = ownerXml(caller);
  const grants: XmlElement[] = [{ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'CanonicalUser', ...owner }, Permission: 'FULL_CONTROL' }];
  if (acl === 'public-read') grants.push({ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'Group', URI: ALL_USERS }, Permission: 'READ' });
  return { Owner: owner, AccessControlList: { Grant: grants } };
}

const asList = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const field = (value: unknown, name: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined);

/** Which canned ACL an AccessControlPolicy body is: exactly the owner's FULL_CONTROL, plus READ for everyone or not. */
function cannedFromPolicy(body: string, caller: S3Caller): CannedAcl {
  const notCanned = () => s3Errors.notImplemented('An ACL other than the canned private or public-read');
  const policy = field(parseXml(body), 'AccessControlPolicy');
  if (policy === undefined) throw s3Errors.malformedXml();
  let ownerGrants = 0;
  let publicGrants = 0;
  for (const grant of asList(field(field(policy, 'AccessControlList'), 'Grant'))) {
    const grantee = field(grant, 'Grantee');
    const permission = field(grant, 'Permission');
    if (field(grantee, 'ID') === String(caller.owner.user.id) && permission === 'FULL_CONTROL') ownerGrants += 1;
    else if (field(grantee, 'URI') === ALL_USERS && permission === 'READ') publicGrants += 1;
    else throw notCanned();
  }
  if (ownerGrants !== 1 || publicGrants > 1) throw notCanned();
  return publicGrants === 1 ? 'public-read' : 'private';
}

export const ACL_HANDLERS: Record<'GetBucketVersioning' | 'GetBucketAcl' | 'PutBucketAcl' | 'GetObjectAcl', Handler> = {
  async GetBucketVersioning(ctx, _request, reply, target) {
    await ownBucket(ctx, target);
    // Never enabled: no Status at all (Suspended would make tools take the bucket for a versioned one).
    return sendXml(reply, 'VersioningConfiguration', {});
  },

  async GetBucketAcl(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    return sendXml(reply, 'AccessControlPolicy', policyXml(target.caller, bucket.public === 1 ? 'public-read' : 'private'));
  },

  async PutBucketAcl(ctx, request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    if (Object.keys(request.headers).some((name) => name.startsWith('x-amz-grant-'))) throw s3Errors.notImplemented('x-amz-grant-* ACL grants');
    const header = request.headers['x-amz-acl'];
    const body = await xmlBody(request, target.caller.claimed.payloadHash, target.caller);
    let acl: CannedAcl;
    if (header !== undefined) {
      if (header !== 'private' && header !== 'public-read') throw s3Errors.notImplemented(`x-amz-acl: ${String(header)}`);
      acl = header;
    } else if (body.trim() !== '') {
      acl = cannedFromPolicy(body, target.caller);
    } else {
      throw s3Errors.invalidArgument('PutBucketAcl needs an x-amz-acl header or an AccessControlPolicy body');
    }
    await setVisibility(ctx.storage, target.caller.owner.user.id, String(bucket.id), { public: acl === 'public-read' });
    return reply.code(200).send();
  },

  async GetObjectAcl(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    // The object must exist (NoSuchKey otherwise); its ACL is its bucket's.
    const found = await findReadable(ctx.storage, { id: bucket.id }, target.key, target.caller.owner.user.id, target.caller.owner.limits);
    return sendXml(reply, 'AccessControlPolicy', policyXml(target.caller, found.bucket.public === 1 ? 'public-read' : 'private'));
  },
};
