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
import { userForToken } from '../domain/sessions.js';
import { planOf } from '../domain/users.js';
import type { AppContext } from './context.js';
import { budgetHeaders } from './rate-limits.js';

export const SESSION_COOKIE = 'pail_session';

/** The signed-in caller, or 401 (an anonymous reader on a route that needs an account). */
export function signedIn(request: FastifyRequest): AccountRow {
  if (request.principal.user === null) throw errors.unauthorized();
  return request.principal.user;
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

/** Developer API: `x-api-key` or `Authorization: Bearer <key>`, then the user's rate budget. */
export function apiKeyAuth(ctx: AppContext) {
  return async function authenticateApiKey(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const headerKey = request.headers['x-api-key'];
    const key = typeof headerKey === 'string' ? headerKey : bearer(request);
    if (key === undefined) {
      if (!request.routeOptions.config.anonymousRead) return refuseCredential(ctx, request);
      request.principal = { via: 'anonymous', user: null };
      reply.headers(budgetHeaders(await ctx.rateLimits.consumeIp(request.ip)));
      return;
    }
    const found = key === '' ? null : await ctx.apiKeys.authenticate(key);
    if (!found) return refuseCredential(ctx, request);
    request.principal = { via: 'api-key', user: found.user, keyId: found.keyId };
    reply.headers(budgetHeaders(await ctx.rateLimits.consumeUser(found.user.id, planOf(found.user))));
  };
}

/** Client API: the session cookie, or the session's JWT as a bearer token. */
export function sessionAuth(ctx: AppContext) {
  return async function authenticateSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await sessionPrincipal(ctx, request);
    if (!principal) return refuseCredential(ctx, request);
    request.principal = principal;
    if (principal.via === 'session-cookie') refuseCrossSite(ctx, request);
    reply.headers(budgetHeaders(await ctx.rateLimits.consumeClient(principal.user.id)));
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
    if (session) {
      request.principal = session;
      return;
    }
    if (token !== undefined) return refuseCredential(ctx, request);
    request.principal = { via: 'anonymous', user: null };
    reply.headers(budgetHeaders(await ctx.rateLimits.consumeIp(request.ip)));
  };
}
