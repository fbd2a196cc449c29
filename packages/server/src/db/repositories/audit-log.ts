/** The audit log: rows are inserted, and read a page at a time; nothing updates or deletes them. */
import type { Db } from '../schema.js';

export interface AuditEntry {
  user_id: number;
  actor: string;
  action: string;
  target: string | null;
  details: string | null;
  at: string;
}

export async function appendAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit_log').values(entry).execute();
}

/**
 * A user's entries, newest first, before the id `before` (a page's cursor);
 * with `bucketIds`, only those about these buckets (`bucket:<id>`, and what is
 * in one, `bucket:<id>/…`).
 */
export function auditPage(db: Db, userId: number, limit: number, before?: number, bucketIds: readonly number[] | null = null) {
  return db
    .selectFrom('audit_log')
    .selectAll()
    .where('user_id', '=', userId)
    .$if(before !== undefined, (q) => q.where('id', '<', before!))
    .$if(bucketIds !== null, (q) =>
      q.where((eb) => eb.or(bucketIds!.flatMap((id) => [eb('target', '=', `bucket:${id}`), eb('target', 'like', `bucket:${id}/%`)]))),
    )
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
