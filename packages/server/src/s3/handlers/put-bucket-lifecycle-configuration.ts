/** PutBucketLifecycleConfiguration: a LifecycleConfiguration body replaces the bucket's rules (domain/lifecycle.ts). */
import { actorOf } from '../../domain/audit.js';
import { putBucketLifecycle } from '../../domain/lifecycle.js';
import { LifecycleRefusal } from '../../domain/lifecycle-rules.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { LIFECYCLE_XML_BODY, lifecycleError, rulesFromXml } from '../lifecycle-xml.js';
import { xmlBody } from '../payload.js';

export const PutBucketLifecycleConfiguration: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const rules = rulesFromXml(await xmlBody(request, target.caller.payloadHash, target.caller, LIFECYCLE_XML_BODY));
  try {
    await putBucketLifecycle(ctx.storage, bucket, rules, actorOf(target.caller.principal));
  } catch (error) {
    throw error instanceof LifecycleRefusal ? lifecycleError(error) : error;
  }
  return reply.code(200).send();
};
