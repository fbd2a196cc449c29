/**
 * Authentication hooks, one per way in. Which one runs is decided by where a
 * route is registered (Developer API scope, Client API scope), never by the
 * handler. API keys open only the Developer API; sessions only the Client API.
 * Each yields a Principal (domain/principal.ts), spends its budget and asks
 * authorize() for the route's action before any handler runs.
 */
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountRow } from '../db/schema.js';
import { looksLikeApiKey } from '../domain/api-keys.js';
import { authorize } from '../domain/authorize.js';
import { errors } from '../domain/errors.js';
import { ANONYMOUS, apiKeyPrincipal, sessionPrincipal, type AccountPrincipal, type Principal } from '../domain/principal.js';
import { userForToken } from '../domain/sessions.js';
import { principalOfSignedUrl, SIGNED_PARAMS, type Grant } from '../domain/signed-urls.js';
import type { AppContext } from './context.js';
import { OPERATION_ACTION } from './operations.js';
import { budgetHeaders } from './rate-limits.js';

export const SESSION_COOKIE = 'pail_session';

/** The signed-in principal, or 401 (an anonymous reader on a route that needs an account). */
export function accountOf(request: FastifyRequest): AccountPrincipal {
  const { principal } = request;
  if (principal.user === null) throw errors.unauthorized();
  return principal;
}

/** The signed-in caller's account, or 401. */
export const signedIn = (request: FastifyRequest): AccountRow => accountOf(request).user;

/** The bucket a route's path names (`…/buckets/:id…`), when it is a bucket id at all; a malformed one is refused by the handler. */
function bucketInPath(request: FastifyRequest): { id: number } | undefined {
  const bucketId = (request.params as { id?: unknown }).id;
  return typeof bucketId === 'string' && /^[1-9][0-9]{0,15}$/.test(bucketId) ? { id: Number(bucketId) } : undefined;
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
  await ctx.rateLimits.spendFor(ANONYMOUS, request.ip);
  throw errors.unauthorized();
}

/**
 * Every way in ends here: the budget the principal names
 * (RateLimits.spendFor), with the budget in the answer's headers, then the
 * route's action (operations.ts) and the bucket in its path, which
 * authorize() decides. A route marked unmetered (a resumable upload's PATCH)
 * spends none for a signed-in caller.
 */
async function admit(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { principal } = request;
  if (principal.via === 'anonymous' || !request.routeOptions.config.unmetered) {
    reply.headers(budgetHeaders(await ctx.rateLimits.spendFor(principal, request.ip)));
  }
  const operation = request.routeOptions.config.operation;
  const action = operation === undefined ? undefined : OPERATION_ACTION[operation];
  if (action !== undefined) authorize(principal, action, bucketInPath(request));
}

/** Developer API: `x-api-key` or `Authorization: Bearer <key>`, then the user's rate budget. */
export function apiKeyAuth(ctx: AppContext) {
  return async function authenticateApiKey(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const headerKey = request.headers['x-api-key'];
    const key = typeof headerKey === 'string' ? headerKey : bearer(request);
    if (key === undefined) {
      if (!request.routeOptions.config.anonymousRead) return refuseCredential(ctx, request);
      request.principal = ANONYMOUS;
      return admit(ctx, request, reply);
    }
    const found = key === '' ? null : await ctx.apiKeys.authenticate(key);
    if (!found) return refuseCredential(ctx, request);
    request.principal = apiKeyPrincipal(found);
    return admit(ctx, request, reply);
  };
}

/** Client API: the session cookie, or the session's JWT as a bearer token. */
export function sessionAuth(ctx: AppContext) {
  return async function authenticateSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await sessionOf(ctx, request);
    if (!principal) return refuseCredential(ctx, request);
    request.principal = principal;
    if (principal.via === 'session-cookie') refuseCrossSite(ctx, request);
    return admit(ctx, request, reply);
  };
}

/** The session a request carries (its token as a bearer token, else its cookie), or null. */
async function sessionOf(ctx: AppContext, request: FastifyRequest): Promise<Principal | null> {
  const token = bearer(request);
  if (token !== undefined) {
    const found = token === '' ? null : await userForToken(ctx.db, ctx.tokens, token);
    return found && sessionPrincipal('session-token', found);
  }
  const cookie = request.cookies[SESSION_COOKIE];
  if (!cookie) return null;
  const found = await userForToken(ctx.db, ctx.tokens, cookie);
  return found && sessionPrincipal('session-cookie', found);
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
    const session = await sessionOf(ctx, request);
    if (token !== undefined && !session) return refuseCredential(ctx, request);
    request.principal = session ?? ANONYMOUS;
    return admit(ctx, request, reply);
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
  const use = principalOfSignedUrl(ports, urlKey, claimed, Math.floor(ports.clock.now() / 1000));
  request.principal = use instanceof Promise ? await use : use;
  return admit(ctx, request, reply);
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
