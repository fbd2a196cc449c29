/**
 * What CORS answers browsers on the S3 listener: preflights (OPTIONS, never
 * signed) matched against the bucket's rules, and the Access-Control-*
 * headers on actual requests, error answers included, whose Origin a rule
 * allows. Without a signature a bucket can only be named by its
 * storage_bucket_name (names are per owner), so preflights use that.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { corsRulesByOwnerName, corsRulesByStorageName, matchCorsRule, type CorsRule } from '../domain/bucket-cors.js';
import { ANONYMOUS } from '../domain/principal.js';
import type { AppContext } from '../http/context.js';
import { S3Error } from './errors.js';

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

const corsRefused = (message: string) => new S3Error('CORSResponse', 403, message);
const NOT_ALLOWED =
  "This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.";

/** The headers a matched rule gives: `*` for a rule open to every origin, else the origin itself (with credentials allowed, as S3). */
function ruleHeaders(rule: CorsRule, origin: string): Record<string, string> {
  const anyOrigin = rule.allowedOrigins.includes('*');
  return {
    'access-control-allow-origin': anyOrigin ? '*' : origin,
    ...(anyOrigin ? {} : { 'access-control-allow-credentials': 'true' }),
    'access-control-allow-methods': rule.allowedMethods.join(', '),
    ...(rule.exposeHeaders.length > 0 ? { 'access-control-expose-headers': rule.exposeHeaders.join(', ') } : {}),
    ...(rule.maxAgeSeconds !== undefined ? { 'access-control-max-age': String(rule.maxAgeSeconds) } : {}),
  };
}

/** OPTIONS /bucket[/key]: 200 with the rule's headers, or 403 CORSResponse (also for a bucket that does not exist, which tells nothing). */
export async function preflight(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, bucket: string): Promise<FastifyReply> {
  // Preflights are anonymous requests, and spend the per-IP budget as they do.
  await ctx.rateLimits.spendFor(ANONYMOUS, request.ip);
  const origin = single(request.headers.origin);
  if (origin === undefined) throw new S3Error('BadRequest', 400, 'Insufficient information. Origin request header needed.');
  const method = single(request.headers['access-control-request-method']);
  if (method === undefined) throw new S3Error('BadRequest', 400, 'Invalid Access-Control-Request-Method: null');
  const requested = (single(request.headers['access-control-request-headers']) ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const rules = await corsRulesByStorageName(ctx.db, bucket);
  if (rules === null) throw corsRefused('CORS is not enabled for this bucket.');
  const rule = matchCorsRule(rules, origin, method, requested);
  if (rule === undefined) throw corsRefused(NOT_ALLOWED);
  return reply
    .code(200)
    .headers(ruleHeaders(rule, origin))
    .headers(requested.length > 0 ? { 'access-control-allow-headers': requested.join(', ') } : {})
    .header('vary', 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method')
    .send();
}

/**
 * On a request with an Origin, the headers of the first rule allowing that
 * origin and method, set before the request is served so that its answer
 * carries them whatever it is. `findRules` is only called for such requests.
 */
export async function addCorsHeaders(request: FastifyRequest, reply: FastifyReply, findRules: () => Promise<CorsRule[] | null>): Promise<void> {
  const origin = single(request.headers.origin);
  if (origin === undefined) return;
  const rules = await findRules();
  const rule = rules === null ? undefined : matchCorsRule(rules, origin, request.method);
  if (rule !== undefined) reply.headers(ruleHeaders(rule, origin)).header('vary', 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method');
}

/** An unsigned request's (and a failed signature's) bucket: by storage name. */
export const addCorsHeadersByStorageName = (ctx: AppContext, request: FastifyRequest, reply: FastifyReply, bucket: string): Promise<void> =>
  addCorsHeaders(request, reply, () => corsRulesByStorageName(ctx.db, bucket));

/** A signed request's bucket: the signer's, by name or storage name. */
export const addCorsHeadersForOwner = (ctx: AppContext, request: FastifyRequest, reply: FastifyReply, ownerId: number, bucket: string): Promise<void> =>
  addCorsHeaders(request, reply, () => corsRulesByOwnerName(ctx.db, ownerId, bucket));
