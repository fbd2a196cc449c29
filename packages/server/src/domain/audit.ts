/**
 * The audit log (issue 39): who changed what in a user's account. Each
 * domain function that makes such a change calls recordAudit() once it has
 * committed; the log is append-only (db/repositories/audit-log.ts has no
 * update or delete). Versioning, lifecycle and object lock changes call it
 * too, with the actions named here.
 */
import { appendAudit, auditPage } from '../db/repositories/audit-log.js';
import type { Db } from '../db/schema.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { pageLimit } from './page-limits.js';
import type { Principal } from './principal.js';

export type AuditAction =
  | 'key.created'
  | 'key.revoked'
  | 'bucket.created'
  | 'bucket.deleted'
  | 'bucket.visibility_changed'
  | 'bucket.versioning_changed'
  | 'bucket.lifecycle_changed'
  | 'bucket.object_lock_changed'
  /** A version's retention set, extended, shortened (with a bypass) or removed (lock-changes.ts). */
  | 'object.retention_changed'
  /** A version's legal hold put on or lifted. */
  | 'object.legal_hold_changed'
  | 'webhook.created'
  | 'webhook.updated'
  | 'webhook.secret_rotated'
  | 'webhook.deleted'
  /** The operator deleted the account (user-deletion.ts): the last entry of its log. */
  | 'user.deleted';

/** Who acted: `key:<id>` (an API key or its S3 credential), `session:<id>`, `operator` (the CLI), … */
export type Actor = string;

/** The operator: a CLI command acting for a user. */
export const OPERATOR: Actor = 'operator';

export function actorOf(principal: Principal | null | undefined): Actor {
  if (!principal) return 'unknown';
  switch (principal.via) {
    case 'api-key':
    case 's3-signature':
    case 's3-presigned-url':
    case 's3-post-policy':
      return `key:${principal.keyId}`;
    case 'session-cookie':
    case 'session-token':
      // A prefix names the session without being a credential.
      return `session:${principal.sessionId.slice(0, 12)}`;
    case 'signed-url':
      return `signed-url:${principal.grant.signer}`;
    case 'operator':
      return OPERATOR;
    case 'anonymous':
      return 'anonymous';
  }
}

/**
 * Appends one entry to the user's log. A failure is the caller's: the change
 * it records has committed, so it is reported (logged) rather than undone.
 */
export async function recordAudit(
  db: Db,
  entry: { userId: number; actor: Actor; action: AuditAction; target?: string | null; details?: Record<string, unknown> },
): Promise<void> {
  await appendAudit(db, {
    user_id: entry.userId,
    actor: entry.actor,
    action: entry.action,
    target: entry.target ?? null,
    details: entry.details === undefined ? null : JSON.stringify(entry.details),
    at: nowIso(),
  });
}

export interface AuditEntryView {
  id: number;
  actor: string;
  action: string;
  target: string | null;
  details: Record<string, unknown> | null;
  at: string;
}

const MAX_PAGE = 200;

/**
 * A page of the user's log, newest first; next_cursor continues it (null: the
 * end). A key limited to some buckets reads only their entries: for it, other
 * buckets (and the account's keys) do not exist (authorize.ts).
 */
export async function readAudit(db: Db, userId: number, query: { limit?: string; cursor?: string }, bucketIds: readonly number[] | null = null) {
  const limit = pageLimit(query.limit, MAX_PAGE, 50);
  let before: number | undefined;
  if (query.cursor !== undefined && query.cursor !== '') {
    // An id as next_cursor gives it: digits an id column holds (1e300 or twenty nines reached PostgreSQL and came back a 500).
    if (!/^[1-9][0-9]{0,15}$/.test(query.cursor)) throw errors.validation('cursor is not valid; pass next_cursor from the previous page');
    before = Number(query.cursor);
  }
  const rows = await auditPage(db, userId, limit + 1, before, bucketIds);
  const page = rows.slice(0, limit);
  const entries: AuditEntryView[] = page.map((row) => ({
    id: row.id,
    actor: row.actor,
    action: row.action,
    target: row.target,
    details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
    at: row.at,
  }));
  return { entries, next_cursor: rows.length > limit ? String(page[page.length - 1]!.id) : null };
}
