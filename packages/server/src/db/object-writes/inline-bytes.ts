/** Small files' bytes live in inline_blobs, keyed by storage key: removed in the transaction that removes their row. */
import type { Db } from '../schema.js';

export async function deleteInlineBytes(db: Db, storageKeys: string[]): Promise<void> {
  if (storageKeys.length === 0) return;
  await db.deleteFrom('inline_blobs').where('storage_key', 'in', storageKeys).execute();
}
