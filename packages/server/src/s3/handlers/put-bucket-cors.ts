/**
 * PutBucketCors: a CORSConfiguration body, translated to the rules
 * domain/bucket-cors.ts keeps and checks. The answers CORS gives browsers
 * (preflights, headers on actual requests) are in cors-answers.ts.
 */
import { putBucketCors, type CorsRule } from '../../domain/bucket-cors.js';
import { s3Errors } from '../errors.js';
import { ownBucket, type Handler } from '../handler-support.js';
import { xmlBody } from '../payload.js';
import { asList, field, parseXml } from '../xml.js';

const texts = (value: unknown): string[] => asList(value).map((item) => (typeof item === 'string' ? item : ''));

function rulesFromXml(body: string): CorsRule[] {
  const configuration = field(parseXml(body), 'CORSConfiguration');
  if (configuration === undefined) throw s3Errors.malformedXml();
  return asList(field(configuration, 'CORSRule')).map((rule) => {
    const id = field(rule, 'ID');
    const maxAge = field(rule, 'MaxAgeSeconds');
    if (maxAge !== undefined && (typeof maxAge !== 'string' || !/^\d{1,9}$/.test(maxAge))) throw s3Errors.malformedXml();
    return {
      ...(typeof id === 'string' ? { id } : {}),
      allowedOrigins: texts(field(rule, 'AllowedOrigin')),
      allowedMethods: texts(field(rule, 'AllowedMethod')),
      allowedHeaders: texts(field(rule, 'AllowedHeader')),
      exposeHeaders: texts(field(rule, 'ExposeHeader')),
      ...(maxAge !== undefined ? { maxAgeSeconds: Number(maxAge) } : {}),
    };
  });
}

export const PutBucketCors: Handler = async (ctx, request, reply, target) => {
  const bucket = await ownBucket(ctx, target);
  const body = await xmlBody(request, target.caller.payloadHash, target.caller);
  await putBucketCors(ctx.db, bucket.id, rulesFromXml(body));
  return reply.code(200).send();
};
