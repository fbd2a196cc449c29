/** Queries on login sessions. */
import type { AccountRow, Db, SessionsTable } from '../schema.js';
import { ACCOUNT_COLUMNS } from './users.js';

export async function insertSession(db: Db, row: SessionsTable): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

/** A session and its user, whatever the session's state (the caller judges expiry and revocation). */
export function findSessionAccount(db: Db, sessionId: string): Promise<(AccountRow & Pick<SessionsTable, 'revoked_at' | 'expires_at'>) | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select(ACCOUNT_COLUMNS)
    .select(['sessions.revoked_at', 'sessions.expires_at'])
    .where('sessions.id', '=', sessionId)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function revokeSession(db: Db, sessionId: string, at: string): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: at }).where('id', '=', sessionId).execute();
}

/** Revokes every live session of a user (their cookies and tokens give 401 from then on); how many there were. */
export async function revokeSessionsOf(db: Db, userId: number, at: string): Promise<number> {
  const result = await db.updateTable('sessions').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** How many sessions of a user are live (neither revoked nor expired at `now`). */
export async function countLiveSessions(db: Db, userId: number, now: string): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
