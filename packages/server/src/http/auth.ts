/**
 * Authentication hooks, one per way in. Which one runs is decided by where a
 * route is registered (Developer API scope, Client API scope), never by the
 * handler. API keys open only the Developer API; sessions only the Client API.
 */
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountRow } from '../db/schema.js';
import { looksLikeApiKey } from '../domain/api-keys.js';
import { errors } from '../domain/errors.js';
import { isUnlimited, NO_LIMITS, requireBucket, requireMayCreateBuckets, requirePermission, type KeyLimits } from '../domain/key-limits.js';
import { userForToken } from '../domain/sessions.js';
import { callerOfSignedUrl, permissionFor, SIGNED_PARAMS, type Grant } from '../domain/signed-urls.js';
import type { AppContext, Principal } from './context.js';
import { OPERATION_PERMISSION } from './operations.js';
import { budgetHeaders } from './rate-limits.js';

export const SESSION_COOKIE = 'pail_session';

/** The signed-in caller, or 401 (an anonymous reader on a route that needs an account). */
export function signedIn(request: FastifyRequest): AccountRow {
  if (request.principal.user === null) throw errors.unauthorized();
  return request.principal.user;
}

/** What the caller's credential allows: a key's or a signed url's limits; a session has none. */
export const limitsOf = (principal: Principal): KeyLimits => (principal.via === 'api-key' || principal.via === 'signed-url' ? principal.limits : NO_LIMITS);

/**
 * A key with limits: the permission the route's operation needs
 * (operations.ts), and the bucket in its path. Checked for every route the
 * key opens, before any handler runs.
 */
function enforceKeyLimits(request: FastifyRequest, limits: KeyLimits): void {
  const operation = request.routeOptions.config.operation;
  const permission = operation === undefined ? undefined : OPERATION_PERMISSION[operation];
  if (permission !== undefined) requirePermission(limits, permission);
  if (operation === 'createBucket') requireMayCreateBuckets(limits);
  const bucketId = (request.params as { id?: unknown }).id;
  if (typeof bucketId === 'string' && /^[1-9][0-9]{0,15}$/.test(bucketId)) requireBucket(limits, Number(bucketId));
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/**
 * A missing, unknown or revoked credential: 401, counted against the client
 * address's budget (PUBLIC_RATE_LIMIT), so guessing keys or tokens costs what
 * anonymous requests cost (429 once it is spent).
 */
async function refuseCredential(ctx: AppContext, request: FastifyRequest): Promise<never> {
  await ctx.rateLimits.consumeIp(request.ip);
  throw errors.unauthorized();
}

/**
 * Every door spends a budget, the one its principal's door decides
 * (RateLimits.spendFor), with the budget in the answer's headers. A route
 * marked unmetered (a resumable upload's PATCH) spends none for a signed-in caller.
 */
async function spendBudget(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { principal } = request;
  if (principal.via !== 'anonymous' && request.routeOptions.config.unmetered) return;
  reply.headers(budgetHeaders(await ctx.rateLimits.spendFor(principal, request.ip)));
}

/** Developer API: `x-api-key` or `Authorization: Bearer <key>`, then the user's rate budget. */
export function apiKeyAuth(ctx: AppContext) {
  return async function authenticateApiKey(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const headerKey = request.headers['x-api-key'];
    const key = typeof headerKey === 'string' ? headerKey : bearer(request);
    if (key === undefined) {
      if (!request.routeOptions.config.anonymousRead) return refuseCredential(ctx, request);
      request.principal = { via: 'anonymous', user: null };
      return spendBudget(ctx, request, reply);
    }
    const found = key === '' ? null : await ctx.apiKeys.authenticate(key);
    if (!found) return refuseCredential(ctx, request);
    request.principal = { via: 'api-key', user: found.user, keyId: found.keyId, limits: found.limits };
    await spendBudget(ctx, request, reply);
    if (!isUnlimited(found.limits)) enforceKeyLimits(request, found.limits);
  };
}

/** Client API: the session cookie, or the session's JWT as a bearer token. */
export function sessionAuth(ctx: AppContext) {
  return async function authenticateSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await sessionPrincipal(ctx, request);
    if (!principal) return refuseCredential(ctx, request);
    request.principal = principal;
    if (principal.via === 'session-cookie') refuseCrossSite(ctx, request);
    await spendBudget(ctx, request, reply);
  };
}

export async function sessionPrincipal(ctx: AppContext, request: FastifyRequest) {
  const token = bearer(request);
  if (token !== undefined) {
    const found = token === '' ? null : await userForToken(ctx.db, ctx.tokens, token);
    return found ? ({ via: 'session-token', ...found } as const) : null;
  }
  const cookie = request.cookies[SESSION_COOKIE];
  if (!cookie) return null;
  const found = await userForToken(ctx.db, ctx.tokens, cookie);
  return found ? ({ via: 'session-cookie', ...found } as const) : null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF: a browser sends the cookie with cross-site requests too, so a
 * state-changing request that rides on the cookie must come from our own
 * origin. Browsers always send Origin on such requests; tools like curl send
 * none and carry no ambient cookie risk.
 */
export function refuseCrossSite(ctx: AppContext, request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin === undefined) {
    if (request.headers['sec-fetch-site'] === 'cross-site') throw errors.forbidden('Cross-site request refused');
    return;
  }
  const own = new Set([new URL(ctx.config.publicUrl).origin, `${request.protocol}://${request.host}`]);
  if (!own.has(origin)) throw errors.forbidden('Cross-site request refused');
}

/** Reads of public files under /storage: anyone; private ones with a key or a session. */
export function optionalAnyAuth(ctx: AppContext) {
  const byKey = apiKeyAuth(ctx);
  return async function authenticateAny(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const headerKey = request.headers['x-api-key'];
    const token = typeof headerKey === 'string' ? headerKey : bearer(request);
    if (token !== undefined && looksLikeApiKey(token)) return byKey(request, reply);
    const session = await sessionPrincipal(ctx, request);
    if (token !== undefined && !session) return refuseCredential(ctx, request);
    request.principal = session ?? { via: 'anonymous', user: null };
    return spendBudget(ctx, request, reply);
  };
}

/**
 * `/storage/…` urls: a signed url (its query carries X-Pail-Signature)
 * stands for the key or session that made it; otherwise reads take a key, a
 * session or nothing (public buckets), and uploads need a signed url.
 */
export function storageUrlAuth(ctx: AppContext) {
  const anyAuth = optionalAnyAuth(ctx);
  return async function authenticateStorageUrl(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Found in the raw query, so a url verified before is served without parsing its query again.
    const query = request.url.indexOf('?');
    if (query >= 0 && request.url.includes(SIGNATURE_PARAM, query)) return authenticateSignedUrl(ctx, request, reply);
    if (request.method === 'PUT') throw errors.forbidden('An upload to a storage url needs a signed url (POST …/files/<filename>/signed-url makes one)');
    return anyAuth(request, reply);
  };
}

const SIGNATURE_PARAM = `${SIGNED_PARAMS.signature}=`;

async function authenticateSignedUrl(ctx: AppContext, request: FastifyRequest, reply: FastifyReply) {
  // HEAD is served by GET urls; the path and query hold the rest of the grant.
  const urlKey = `${request.method === 'PUT' ? 'PUT' : 'GET'} ${request.url}`;
  const claimed = () => grantOf(request, request.query as Record<string, unknown>);
  const ports = { db: ctx.db, apiKeys: ctx.apiKeys, signer: ctx.urlSigner, clock: ctx.storage.clock };
  const use = callerOfSignedUrl(ports, urlKey, claimed, Math.floor(ports.clock.now() / 1000));
  const caller = use instanceof Promise ? await use : use;
  const { grant } = caller;
  request.principal = { via: 'signed-url', user: caller.user, limits: caller.limits, grant };
  await spendBudget(ctx, request, reply);
  requirePermission(caller.limits, permissionFor(grant.method));
}

/** The grant a signed url's request claims, and its signature; a malformed one cannot match any signature. */
function grantOf(request: FastifyRequest, query: Record<string, unknown>): { grant: Grant; signature: string } {
  const params = request.params as { bucket?: string; '*'?: string };
  const whole = (name: string): number | undefined => {
    const value = query[name];
    return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
  };
  const expires = whole(SIGNED_PARAMS.expires);
  const signer = query[SIGNED_PARAMS.signer];
  const contentType = query[SIGNED_PARAMS.contentType];
  const signature = query[SIGNED_PARAMS.signature];
  if (expires === undefined || typeof signature !== 'string' || typeof signer !== 'string' || !/^(k\d{1,15}|s[A-Za-z0-9_-]{1,64})$/.test(signer)) {
    throw errors.signedUrlRefused('is not valid: it was altered, or not made by this service');
  }
  const grant: Grant = {
    method: request.method === 'PUT' ? 'PUT' : 'GET',
    storageName: params.bucket ?? '',
    filename: params['*'] ?? '',
    expires,
    signer,
    maxBytes: whole(SIGNED_PARAMS.maxBytes),
    contentType: typeof contentType === 'string' ? contentType : undefined,
  };
  return { grant, signature };
}
