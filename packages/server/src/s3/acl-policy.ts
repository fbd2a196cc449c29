/**
 * ACLs as Pail has them: a bucket is private or public-read (its
 * visibility, the same setting as the Pail API's POST /:id/visibility), and
 * an object has its bucket's. This is the AccessControlPolicy both ACL reads
 * answer, and the one PutBucketAcl and PutObjectAcl recognise in a body.
 */
import type { S3Caller } from './auth.js';
import { s3Errors } from './errors.js';
import { ownerXml } from './handler-support.js';
import { asList, field, parseXml, type XmlElement } from './xml.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
export const ALL_USERS = 'http://acs.amazonaws.com/groups/global/AllUsers';

export type CannedAcl = 'private' | 'public-read';

export function policyXml(caller: S3Caller, acl: CannedAcl): XmlElement {
  const owner = ownerXml(caller);
  const grants: XmlElement[] = [{ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'CanonicalUser', ...owner }, Permission: 'FULL_CONTROL' }];
  if (acl === 'public-read') grants.push({ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'Group', URI: ALL_USERS }, Permission: 'READ' });
  return { Owner: owner, AccessControlList: { Grant: grants } };
}

/**
 * Which canned ACL an AccessControlPolicy body is: exactly the owner's
 * FULL_CONTROL, plus READ for everyone or not; undefined for any other ACL,
 * which each ACL write refuses in its own way.
 */
export function cannedFromPolicy(body: string, caller: S3Caller): CannedAcl | undefined {
  const policy = field(parseXml(body), 'AccessControlPolicy');
  if (policy === undefined) throw s3Errors.malformedXml();
  let ownerGrants = 0;
  let publicGrants = 0;
  for (const grant of asList(field(field(policy, 'AccessControlList'), 'Grant'))) {
    const grantee = field(grant, 'Grantee');
    const permission = field(grant, 'Permission');
    if (field(grantee, 'ID') === String(caller.principal.user.id) && permission === 'FULL_CONTROL') ownerGrants += 1;
    else if (field(grantee, 'URI') === ALL_USERS && permission === 'READ') publicGrants += 1;
    else return undefined;
  }
  if (ownerGrants !== 1 || publicGrants > 1) return undefined;
  return publicGrants === 1 ? 'public-read' : 'private';
}
