/**
 * PutObjectRetention: sets, extends, or (GOVERNANCE, with x-amz-bypass-governance-retention and a key
 * that may) shortens or removes a version's retention; the rule is domain/object-lock.ts's.
 */
import { actorOf } from '../../domain/audit.js';
import { setRetention } from '../../domain/lock-changes.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { lockedVersionOf } from '../lock-targets.js';
import { bypassAsked, retentionFromXml } from '../object-lock.js';
import { xmlBody } from '../payload.js';

export const PutObjectRetention: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const retention = retentionFromXml(await xmlBody(request, target.caller.payloadHash, target.caller));
  const version = await lockedVersionOf(ctx, bucket, target);
  await setRetention(ctx.storage, bucket, version, retention, bypassAsked(request, target.caller.principal), actorOf(target.caller.principal));
  return reply.code(200).send();
};
