/**
 * Get/Put/DeleteBucketCors: a bucket's CORSConfiguration, translated to and
 * from the rules domain/bucket-cors.ts keeps and checks. The answers CORS
 * gives browsers (preflights, headers on actual requests) are in
 * cors-answers.ts.
 */
import { deleteBucketCors, getBucketCors, putBucketCors, type CorsRule } from '../domain/bucket-cors.js';
import { S3Error, s3Errors } from './errors.js';
import { ownBucket, sendXml, type Handler } from './handler-support.js';
import { xmlBody } from './payload.js';
import { parseXml, type XmlElement } from './xml.js';

const asList = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const field = (value: unknown, name: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined);
const texts = (value: unknown): string[] => asList(value).map((item) => (typeof item === 'string' ? item : ''));

const noSuchCors = () => new S3Error('NoSuchCORSConfiguration', 404, 'The CORS configuration does not exist');

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

const ruleXml = (rule: CorsRule): XmlElement => ({
  ...(rule.id !== undefined ? { ID: rule.id } : {}),
  AllowedHeader: rule.allowedHeaders,
  AllowedMethod: rule.allowedMethods,
  AllowedOrigin: rule.allowedOrigins,
  ExposeHeader: rule.exposeHeaders,
  ...(rule.maxAgeSeconds !== undefined ? { MaxAgeSeconds: rule.maxAgeSeconds } : {}),
});

export const CORS_HANDLERS: Record<'GetBucketCors' | 'PutBucketCors' | 'DeleteBucketCors', Handler> = {
  async GetBucketCors(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    const rules = await getBucketCors(ctx.db, bucket.id);
    if (rules === null) throw noSuchCors();
    return sendXml(reply, 'CORSConfiguration', { CORSRule: rules.map(ruleXml) });
  },

  async PutBucketCors(ctx, request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    const body = await xmlBody(request, target.caller.claimed.payloadHash, target.caller);
    await putBucketCors(ctx.db, bucket.id, rulesFromXml(body));
    return reply.code(200).send();
  },

  async DeleteBucketCors(ctx, _request, reply, target) {
    const bucket = await ownBucket(ctx, target);
    await deleteBucketCors(ctx.db, bucket.id);
    return reply.code(204).send();
  },
};
