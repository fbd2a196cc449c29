/**
 * Moves the cache_epochs row (migrations.ts): called right after a change
 * that cached lookups depend on but that another process may make (the `pail`
 * CLI revoking a key or changing a plan), before that change is reported
 * done, so an embedded server empties its caches at its next request
 * (app.ts). On the caller's handle, so it joins the caller's transaction.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export async function moveCacheEpoch(db: Kysely<Database>): Promise<void> {
  await db
    .updateTable('cache_epochs')
    .set((eb) => ({ epoch: eb('epoch', '+', 1) }))
    .where('id', '=', 1)
    .execute();
}
