/**
 * The cache_epochs row: moved by a change that cached lookups depend on when
 * another process may have made it (the `pail` CLI revoking a key or changing
 * a plan), so an embedded server empties its caches (cache-epoch-watch.ts).
 */
import type { Db } from '../schema.js';

export async function moveCacheEpoch(db: Db): Promise<void> {
  await db
    .updateTable('cache_epochs')
    .set((eb) => ({ epoch: eb('epoch', '+', 1) }))
    .where('id', '=', 1)
    .execute();
}
