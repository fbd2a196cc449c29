/** Accounts for the dashboard: signup, login, logout, me (decisions.md). */
import { CredentialsBody, Data, MessageSchema, UserSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';
import { dummyPasswordHash, verifyPassword } from '../../domain/passwords.js';
import { createSession, revokeSession, SESSION_TTL_SECONDS } from '../../domain/sessions.js';
import { createUser, findUserByEmail, parseCredentials, userView } from '../../domain/users.js';
import type { UserRow } from '../../db/schema.js';
import { SESSION_COOKIE, sessionAuth } from '../auth.js';
import type { AppContext } from '../context.js';

const AuthResponse = Data(Type.Object({ user: UserSchema, token: Type.String() }));
type CredentialsRequest = FastifyRequest<{ Body: { email?: unknown; password?: unknown } }>;

export function registerAuthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const secure = ctx.config.publicUrl.startsWith('https:');
  const tags = ['Accounts'];

  async function startSession(reply: FastifyReply, user: UserRow) {
    const token = await createSession(ctx.db, ctx.tokens, user.id);
    reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: SESSION_TTL_SECONDS });
    return { data: { user: userView(user, ctx.config.plans), token } };
  }

  app.post('/api/auth/signup', { schema: { tags, summary: 'Create an account', body: CredentialsBody, response: { 201: AuthResponse } } }, async (request: CredentialsRequest, reply) => {
    if (ctx.config.signup === 'closed') throw errors.signupClosed();
    const user = await createUser(ctx.db, request.body);
    return reply.code(201).send(await startSession(reply, user));
  });

  app.post('/api/auth/login', { schema: { tags, summary: 'Log in', body: CredentialsBody, response: { 200: AuthResponse } } }, async (request: CredentialsRequest, reply) => {
    const { email, password } = parseCredentials(request.body);
    await ctx.rateLimits.startLogin(request.ip, email);
    const user = await findUserByEmail(ctx.db, email);
    // Hash even for unknown emails, so timing does not tell which accounts exist.
    const ok = await verifyPassword(password, user?.password_hash ?? (await dummyPasswordHash()));
    // A failure stays counted (startLogin counted it); a success gives it back.
    if (!user || !ok) throw errors.invalidCredentials();
    await ctx.rateLimits.loginSucceeded(request.ip, email);
    return reply.send(await startSession(reply, user));
  });

  app.register(async (scope) => {
    scope.addHook('onRequest', sessionAuth(ctx));
    scope.post('/api/auth/logout', { schema: { tags, summary: 'Log out (revokes the session and its token)', response: { 200: MessageSchema } } }, async (request, reply) => {
      if (request.principal.via === 'session-cookie' || request.principal.via === 'session-token') {
        await revokeSession(ctx.db, request.principal.sessionId);
      }
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return { message: 'Logged out' };
    });
    scope.get('/api/auth/me', { schema: { tags, summary: 'The signed-in user', response: { 200: Data(UserSchema) } } }, async (request) => {
      return { data: userView(request.principal.user!, ctx.config.plans) };
    });
  });
}
