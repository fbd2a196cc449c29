/**
 * ACLs as Pail has them: a bucket is private or public-read (its
 * visibility, the same setting as the Pail API's POST /:id/visibility), and
 * an object has its bucket's. This is the AccessControlPolicy both ACL reads
 * answer, and the grantee PutBucketAcl recognises as everyone.
 */
import type { S3Caller } from './auth.js';
import { ownerXml } from './handler-support.js';
import type { XmlElement } from './xml.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
export const ALL_USERS = 'http://acs.amazonaws.com/groups/global/AllUsers';

export type CannedAcl = 'private' | 'public-read';

export function policyXml(caller: S3Caller, acl: CannedAcl): XmlElement {
  const owner = ownerXml(caller);
  const grants: XmlElement[] = [{ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'CanonicalUser', ...owner }, Permission: 'FULL_CONTROL' }];
  if (acl === 'public-read') grants.push({ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'Group', URI: ALL_USERS }, Permission: 'READ' });
  return { Owner: owner, AccessControlList: { Grant: grants } };
}
