/**
 * A bucket's CORS rules (S3's CORSConfiguration): which origins may use the
 * bucket from a browser, with which methods and request headers. Kept per
 * bucket as one JSON list; the S3 door translates the XML and the answers'
 * headers, the rules and their matching live here.
 */
import type { Db } from '../db/schema.js';
import { deleteCorsRules, findCorsRules, findCorsRulesByStorageName, saveCorsRules } from '../db/repositories/bucket-cors.js';
import { findOwnLiveBucketByName } from '../db/repositories/buckets.js';
import { errors } from './errors.js';

export interface CorsRule {
  id?: string;
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

/** S3's limits: at most 100 rules, the five methods S3 serves, one `*` in an origin or a header name. */
export const MAX_CORS_RULES = 100;
export const CORS_METHODS: readonly string[] = ['GET', 'PUT', 'HEAD', 'POST', 'DELETE'];
const MAX_ID_LENGTH = 255;

export function validateCorsRules(rules: CorsRule[]): void {
  if (rules.length === 0) throw errors.validation('A CORS configuration needs at least one CORSRule');
  if (rules.length > MAX_CORS_RULES) throw errors.validation(`A CORS configuration may have at most ${MAX_CORS_RULES} rules`);
  for (const rule of rules) {
    if (rule.id !== undefined && rule.id.length > MAX_ID_LENGTH) throw errors.validation(`A CORSRule ID may be at most ${MAX_ID_LENGTH} characters`);
    if (rule.allowedOrigins.length === 0 || rule.allowedMethods.length === 0) {
      throw errors.validation('Each CORSRule needs at least one AllowedOrigin and one AllowedMethod');
    }
    for (const method of rule.allowedMethods) {
      if (!CORS_METHODS.includes(method)) throw errors.validation(`Found unsupported HTTP method in CORS config. Unsupported method is ${method}`);
    }
    for (const origin of rule.allowedOrigins) {
      if (wildcards(origin) > 1) throw errors.validation(`AllowedOrigin "${origin}" can not have more than one wildcard.`);
    }
    for (const header of rule.allowedHeaders) {
      if (wildcards(header) > 1) throw errors.validation(`AllowedHeader "${header}" can not have more than one wildcard.`);
    }
    if (rule.maxAgeSeconds !== undefined && !(Number.isSafeInteger(rule.maxAgeSeconds) && rule.maxAgeSeconds >= 0)) {
      throw errors.validation('MaxAgeSeconds must be a whole number of seconds');
    }
  }
}

const wildcards = (pattern: string): number => pattern.split('*').length - 1;

/** `*` alone matches anything; one `*` inside matches any run of characters there (as S3's http://*.example.com). */
function wildcardMatch(pattern: string, value: string): boolean {
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === value;
  const prefix = pattern.slice(0, star);
  const suffix = pattern.slice(star + 1);
  return value.length >= prefix.length + suffix.length && value.startsWith(prefix) && value.endsWith(suffix);
}

/**
 * The first rule allowing this origin, method and every one of the request
 * headers (as S3 evaluates them, in order). Origins compare as sent, header
 * names without regard to case.
 */
export function matchCorsRule(rules: readonly CorsRule[], origin: string, method: string, requestHeaders: readonly string[] = []): CorsRule | undefined {
  return rules.find(
    (rule) =>
      rule.allowedOrigins.some((pattern) => wildcardMatch(pattern, origin)) &&
      rule.allowedMethods.includes(method) &&
      requestHeaders.every((header) => rule.allowedHeaders.some((pattern) => wildcardMatch(pattern.toLowerCase(), header.toLowerCase()))),
  );
}

const parseRules = (json: string | undefined): CorsRule[] | null => (json === undefined ? null : (JSON.parse(json) as CorsRule[]));

/** The bucket's rules, or null when it has no CORS configuration. */
export async function getBucketCors(db: Db, bucketId: number): Promise<CorsRule[] | null> {
  return parseRules(await findCorsRules(db, bucketId));
}

/** The rules of the live bucket with this storage name (how unsigned requests name buckets), or null. */
export async function corsRulesByStorageName(db: Db, storageName: string): Promise<CorsRule[] | null> {
  return storageName === '' ? null : parseRules(await findCorsRulesByStorageName(db, storageName));
}

export async function putBucketCors(db: Db, bucketId: number, rules: CorsRule[]): Promise<void> {
  validateCorsRules(rules);
  await saveCorsRules(db, bucketId, JSON.stringify(rules));
}

export async function deleteBucketCors(db: Db, bucketId: number): Promise<void> {
  await deleteCorsRules(db, bucketId);
}

/** The rules of the owner's live bucket by name or storage name (as signed requests name buckets), or null. */
export async function corsRulesByOwnerName(db: Db, ownerId: number, name: string): Promise<CorsRule[] | null> {
  const bucket = name === '' ? undefined : await findOwnLiveBucketByName(db, ownerId, name);
  return bucket === undefined ? null : getBucketCors(db, bucket.id);
}
