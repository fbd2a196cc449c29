/**
 * Login sessions. A session is a database row; the cookie and the bearer token
 * are one JWT that names it (`sid`). Verifying checks the signature and then the
 * row, so logging out (revoking the row) kills the cookie and the token at once.
 */
import { createSigner, createVerifier } from 'fast-jwt';
import { randomBytes } from 'node:crypto';
import { findSessionAccount, insertSession, revokeSession as revokeSessionRow } from '../db/repositories/sessions.js';
import type { AccountRow, Db } from '../db/schema.js';
import { nowIso } from './clock.js';

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

export interface SessionTokens {
  sign(payload: { sid: string; sub: number }): string;
  verify(token: string): { sid: string; sub: number } | null;
}

export function sessionTokens(secret: string): SessionTokens {
  const signer = createSigner({ key: secret, algorithm: 'HS256', expiresIn: SESSION_TTL_SECONDS * 1000 });
  const verifier = createVerifier({ key: secret, algorithms: ['HS256'], cache: true });
  return {
    sign: (payload) => signer(payload),
    verify(token) {
      try {
        const payload = verifier(token) as { sid?: unknown; sub?: unknown };
        if (typeof payload.sid !== 'string' || typeof payload.sub !== 'number') return null;
        return { sid: payload.sid, sub: payload.sub };
      } catch {
        return null;
      }
    },
  };
}

export async function createSession(db: Db, tokens: SessionTokens, userId: number): Promise<string> {
  const id = randomBytes(18).toString('base64url');
  const now = new Date();
  await insertSession(db, {
    id,
    user_id: userId,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + SESSION_TTL_SECONDS * 1000).toISOString(),
    revoked_at: null,
  });
  return tokens.sign({ sid: id, sub: userId });
}

/** The user behind a token, or null when the token is bad, expired or revoked. */
export async function userForToken(db: Db, tokens: SessionTokens, token: string): Promise<{ user: AccountRow; sessionId: string } | null> {
  const claims = tokens.verify(token);
  if (!claims) return null;
  const row = await findSessionAccount(db, claims.sid);
  if (!row || row.revoked_at !== null || row.expires_at <= nowIso() || row.id !== claims.sub) return null;
  const { revoked_at: _revoked, expires_at: _expires, ...user } = row;
  return { user, sessionId: claims.sid };
}

export async function revokeSession(db: Db, sessionId: string): Promise<void> {
  await revokeSessionRow(db, sessionId, nowIso());
}
