/** GetBucketCors: the bucket's rules (domain/bucket-cors.ts) as a CORSConfiguration; none kept is NoSuchCORSConfiguration. */
import { getBucketCors, type CorsRule } from '../../domain/bucket-cors.js';
import { S3Error } from '../errors.js';
import { ownBucket, sendXml, type Handler } from '../handler-support.js';
import type { XmlElement } from '../xml.js';

const noSuchCors = () => new S3Error('NoSuchCORSConfiguration', 404, 'The CORS configuration does not exist');

const ruleXml = (rule: CorsRule): XmlElement => ({
  ...(rule.id !== undefined ? { ID: rule.id } : {}),
  AllowedHeader: rule.allowedHeaders,
  AllowedMethod: rule.allowedMethods,
  AllowedOrigin: rule.allowedOrigins,
  ExposeHeader: rule.exposeHeaders,
  ...(rule.maxAgeSeconds !== undefined ? { MaxAgeSeconds: rule.maxAgeSeconds } : {}),
});

export const GetBucketCors: Handler = async (ctx, _request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const rules = await getBucketCors(ctx.db, bucket.id);
  if (rules === null) throw noSuchCors();
  return sendXml(reply, 'CORSConfiguration', { CORSRule: rules.map(ruleXml) });
};
