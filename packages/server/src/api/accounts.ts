/** Accounts for the dashboard: signup, login, logout, me (decisions.md). */
import { AuthResultSchema, CredentialsBody, Data, MessageSchema, UserSchema } from '@pail/shared';
import type { FastifyReply } from 'fastify';
import type { AccountRow } from '../db/schema.js';
import { errors } from '../domain/errors.js';
import { dummyPasswordHash, verifyPassword } from '../domain/passwords.js';
import { createSession, revokeSession, SESSION_TTL_SECONDS } from '../domain/sessions.js';
import { createUser, findUser, parseCredentials, userWithHoldings } from '../domain/users.js';
import { SESSION_COOKIE, sessionAuth, signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, type Scope } from '../http/route.js';

const tag = 'Accounts';
const AuthResponse = Data(AuthResultSchema);

export function registerAccountRoutes(app: Scope, ctx: AppContext): void {
  const secure = ctx.config.publicUrl.startsWith('https:');

  async function startSession(reply: FastifyReply, user: AccountRow) {
    const token = await createSession(ctx.db, ctx.tokens, user.id);
    void reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: SESSION_TTL_SECONDS });
    return { data: { user: await userWithHoldings(ctx.db, user, ctx.config.plans), token } };
  }

  addRoute(app, {
    operation: 'signup',
    routes: ['POST /api/auth/signup'],
    tag,
    schema: { body: CredentialsBody, response: { 201: AuthResponse } },
    handler: async (request, reply) => {
      if (ctx.config.signup === 'closed') throw errors.signupClosed();
      await ctx.rateLimits.startSignup(request.ip);
      const user = await createUser(ctx.db, request.body, ctx.passwordCost);
      return reply.code(201).send(await startSession(reply, user));
    },
  });

  addRoute(app, {
    operation: 'login',
    routes: ['POST /api/auth/login'],
    tag,
    schema: { body: CredentialsBody, response: { 200: AuthResponse } },
    handler: async (request, reply) => {
      const { email, password } = parseCredentials(request.body);
      await ctx.rateLimits.startLogin(request.ip, email);
      const user = await findUser(ctx.db, email);
      // Hash even for unknown emails, so timing does not tell which accounts exist.
      const ok = await verifyPassword(password, user?.password_hash ?? (await dummyPasswordHash(ctx.passwordCost)));
      // A failure stays counted (startLogin counted it); a success gives it back.
      if (!user || !ok) throw errors.invalidCredentials();
      await ctx.rateLimits.loginSucceeded(request.ip, email);
      const { password_hash: _hash, ...account } = user;
      return reply.send(await startSession(reply, account));
    },
  });

  void app.register(async (scope: Scope) => {
    scope.addHook('onRequest', sessionAuth(ctx));
    addRoute(scope, {
      operation: 'logout',
      routes: ['POST /api/auth/logout'],
      tag,
      schema: { response: { 200: MessageSchema } },
      handler: async (request, reply) => {
        if (request.principal.via === 'session-cookie' || request.principal.via === 'session-token') {
          await revokeSession(ctx.db, request.principal.sessionId);
        }
        void reply.clearCookie(SESSION_COOKIE, { path: '/' });
        return { message: 'Logged out' };
      },
    });
    addRoute(scope, {
      operation: 'me',
      routes: ['GET /api/auth/me'],
      tag,
      schema: { response: { 200: Data(UserSchema) } },
      handler: async (request) => ({ data: await userWithHoldings(ctx.db, signedIn(request), ctx.config.plans) }),
    });
  });
}
