/** Migration 0025: a user's account deleted by the operator (`pail users delete`). */
import { type Kysely, type Migration } from 'kysely';

/**
 * An account is soft-deleted, as a bucket is: its row stays, so its audit log,
 * its soft-deleted buckets and the webhook events of their deletion still name
 * it, and ids are never reused. `deleted_at` marks it; every lookup of a live
 * account (login, keys, sessions, `pail users list`) skips it. The email
 * column's unique constraint stays (SQLite cannot drop a column's constraint
 * without rebuilding the table), so a deletion also replaces the email with a
 * tombstone (domain/user-deletion.ts), which frees the address for a new
 * sign-up.
 */
export function userDeletion(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('users').addColumn('deleted_at', 'text').execute();
    },
  };
}
