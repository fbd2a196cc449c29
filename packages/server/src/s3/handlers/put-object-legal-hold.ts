/** PutObjectLegalHold: puts a version under a legal hold (ON) or lifts it (OFF). */
import { actorOf } from '../../domain/audit.js';
import { setLegalHold } from '../../domain/lock-changes.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { lockedVersionOf } from '../lock-targets.js';
import { legalHoldFromXml } from '../object-lock.js';
import { xmlBody } from '../payload.js';

export const PutObjectLegalHold: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const on = legalHoldFromXml(await xmlBody(request, target.caller.payloadHash, target.caller));
  const version = await lockedVersionOf(ctx, bucket, target);
  await setLegalHold(ctx.storage, bucket, version, on, actorOf(target.caller.principal));
  return reply.code(200).send();
};
