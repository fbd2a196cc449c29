/** GetObjectLegalHold: whether a version is under a legal hold (ON or OFF). */
import { lockOf } from '../../domain/object-lock.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import { lockedVersionOf } from '../lock-targets.js';

export const GetObjectLegalHold: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const version = await lockedVersionOf(ctx, bucket, target);
  const lock = await lockOf(ctx.db, version.storageKey);
  return sendXml(reply, 'LegalHold', { Status: lock.legalHold ? 'ON' : 'OFF' });
};
