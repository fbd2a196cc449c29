/**
 * PutPublicAccessBlock: a PublicAccessBlockConfiguration body, its four
 * switches `true` or `false` (absent: false), kept by
 * domain/public-access.ts, which says what each means in Pail.
 */
import { putPublicAccessBlock, type PublicAccessBlock } from '../../domain/public-access.js';
import { s3Errors } from '../errors.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { field, parseXml } from '../xml.js';

function switchOf(configuration: unknown, name: string): boolean {
  const value = field(configuration, name);
  if (value === undefined) return false;
  if (value !== 'true' && value !== 'false') throw s3Errors.malformedXml();
  return value === 'true';
}

function blockFromXml(body: string): PublicAccessBlock {
  const configuration = field(parseXml(body), 'PublicAccessBlockConfiguration');
  if (configuration === undefined) throw s3Errors.malformedXml();
  return {
    blockPublicAcls: switchOf(configuration, 'BlockPublicAcls'),
    ignorePublicAcls: switchOf(configuration, 'IgnorePublicAcls'),
    blockPublicPolicy: switchOf(configuration, 'BlockPublicPolicy'),
    restrictPublicBuckets: switchOf(configuration, 'RestrictPublicBuckets'),
  };
}

export const PutPublicAccessBlock: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const body = await xmlBody(request, target.caller.payloadHash, target.caller);
  await putPublicAccessBlock(ctx.storage, bucket.id, blockFromXml(body));
  return reply.code(200).send();
};
