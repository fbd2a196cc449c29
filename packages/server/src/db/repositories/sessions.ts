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
    .executeTakeFirst();
}

export async function revokeSession(db: Db, sessionId: string, at: string): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: at }).where('id', '=', sessionId).execute();
}
