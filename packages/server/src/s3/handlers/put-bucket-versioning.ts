/**
 * PutBucketVersioning: Enabled or Suspended (domain/buckets.ts setVersioning;
 * never back to unversioned). MFA delete is not something Pail has: a
 * configuration asking for it is refused rather than ignored.
 */
import { actorOf } from '../../domain/audit.js';
import { setVersioning } from '../../domain/buckets.js';
import { s3Errors } from '../errors.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { field, parseXml } from '../xml.js';

export const PutBucketVersioning: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const root = field(parseXml(await xmlBody(request, target.caller.payloadHash, target.caller)), 'VersioningConfiguration');
  if (root === undefined) throw s3Errors.malformedXml();
  const status = field(root, 'Status');
  const mfaDelete = field(root, 'MfaDelete');
  if (mfaDelete === 'Enabled') throw s3Errors.invalidArgument('MFA delete is not supported');
  if (status !== 'Enabled' && status !== 'Suspended') throw s3Errors.malformedXml();
  await setVersioning(ctx.storage, bucket, status === 'Enabled' ? 'enabled' : 'suspended', actorOf(target.caller.principal));
  return reply.code(200).send();
};
