/**
 * The webhook outbox: one delivery row per event and matching webhook,
 * written by the change's own transaction (object-writes/, buckets.ts), then
 * read in small pages and marked by the deliverer (domain/webhook-deliverer.ts).
 */
import { sql } from 'kysely';
import type { Dialect } from '../migrations.js';
import type { Db } from '../schema.js';
import type { WebhooksTable } from '../event-tables.js';
import type { Selectable } from 'kysely';

/** A delivery as the commit writes it; the row's id (its order) is given by the database. */
export interface OutboxEvent {
  webhook_id: number;
  message_id: string;
  event: string;
  event_name: string;
  bucket_name: string;
  object_key: string | null;
  size: number | null;
  etag: string | null;
  /** As S3's events show it; null where the event names no version (an unversioned bucket's, a bucket's own). */
  version_id: string | null;
  principal: string | null;
  event_time: string;
}

export const OUTBOX_COLUMNS = [
  'webhook_id',
  'message_id',
  'event',
  'event_name',
  'bucket_name',
  'object_key',
  'size',
  'etag',
  'version_id',
  'principal',
  'event_time',
  'state',
] as const;

/** SQLite's prepared form (object-writes/sqlite.ts), in OUTBOX_COLUMNS' order. */
export const INSERT_OUTBOX_SQL = `insert into webhook_deliveries (${OUTBOX_COLUMNS.join(', ')}) values (${OUTBOX_COLUMNS.map(() => '?').join(', ')})`;

export const outboxValues = (event: OutboxEvent): unknown[] => [
  event.webhook_id,
  event.message_id,
  event.event,
  event.event_name,
  event.bucket_name,
  event.object_key,
  event.size,
  event.etag,
  event.version_id,
  event.principal,
  event.event_time,
  'pending',
];

/**
 * The events of a write with the version it made, which only its transaction
 * knows (the bucket's versioning is read there): none shown in an unversioned
 * bucket, else its id, `null` for the null version (a suspended bucket's).
 */
export function withVersionMade<T extends readonly OutboxEvent[] | undefined>(events: T, versioning: string, versionId: string | null): T {
  if (events === undefined || events.length === 0 || versioning === 'unversioned') return events;
  return events.map((event) => ({ ...event, version_id: versionId ?? 'null' })) as unknown as T;
}

/** Writes the events in `trx`, the transaction of the change they report, in their order. */
export async function insertOutbox(trx: Db, events: readonly OutboxEvent[] | undefined): Promise<void> {
  if (!events || events.length === 0) return;
  await trx
    .insertInto('webhook_deliveries')
    .values(events.map((event) => ({ ...event, state: 'pending' })))
    .execute();
}

export type WebhookRow = Selectable<WebhooksTable>;

/**
 * Takes one enabled endpoint with a pending delivery that is due and no live
 * lease, for `owner` until `until`; null when there is none. The outer
 * condition is checked again on the row itself, so two instances racing for
 * one endpoint never both win (PostgreSQL also skips rows another is locking).
 */
export async function claimEndpoint(db: Db, dialect: Dialect, owner: string, now: string, until: string): Promise<WebhookRow | null> {
  // The owners being delivered to now (leases held: a few rows), read once rather than counted per candidate.
  const busy = await db.selectFrom('webhooks').select('owner_id').distinct().where('lease_until', '>=', now).execute();
  const busyOwners = busy.map((row) => row.owner_id);
  const due = db
    .selectFrom('webhooks as w')
    .select('w.id')
    .where('w.enabled', '=', 1)
    .where((eb) => eb.or([eb('w.lease_until', 'is', null), eb('w.lease_until', '<', now)]))
    .where((eb) => eb.or([eb('w.next_attempt_at', 'is', null), eb('w.next_attempt_at', '<=', now)]))
    .where((eb) => eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.webhook_id', '=', 'w.id').where('d.state', '=', 'pending')))
    // Owners take turns: an endpoint of an owner not being delivered to now comes first, so one owner's many stalling
    // endpoints never hold every deliverer while another's wait (then by id, as they were made).
    .$if(busyOwners.length > 0, (q) => q.orderBy(sql`case when w.owner_id in (${sql.join(busyOwners)}) then 1 else 0 end`))
    .orderBy('w.id')
    .limit(1);
  // A plain read first: an idle server's every poll writes and locks nothing.
  if (!(await due.executeTakeFirst())) return null;
  const candidate = due.$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked());
  const row = await db
    .updateTable('webhooks')
    .set({ lease_owner: owner, lease_until: until })
    .where('id', '=', candidate)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .where('enabled', '=', 1)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Extends the lease this instance holds on an enabled endpoint, and reads the
 * endpoint as it is now: undefined when the lease is no longer this
 * instance's, or the endpoint is gone or disabled.
 */
export function renewLease(db: Db, webhookId: number, owner: string, until: string): Promise<WebhookRow | undefined> {
  return db
    .updateTable('webhooks')
    .set({ lease_until: until })
    .where('id', '=', webhookId)
    .where('lease_owner', '=', owner)
    .where('enabled', '=', 1)
    .returningAll()
    .executeTakeFirst();
}

/** Extends or ends (until null) a lease this instance holds; false when it no longer holds it. */
export async function holdLease(db: Db, webhookId: number, owner: string, until: string | null): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set(until === null ? { lease_owner: null, lease_until: null } : { lease_until: until })
    .where('id', '=', webhookId)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** On start-up of the only process (SQLite): leases a killed process held are void. */
export async function dropAllLeases(db: Db): Promise<void> {
  await db.updateTable('webhooks').set({ lease_owner: null, lease_until: null }).where('lease_owner', 'is not', null).execute();
}

export type DeliveryRow = Awaited<ReturnType<typeof pendingPage>>[number];

/** The endpoint's next pending deliveries, oldest first: a small page, so memory never holds the backlog. */
export function pendingPage(db: Db, webhookId: number, limit: number) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('state', '=', 'pending')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Puts pending deliveries in messages, each a run of the endpoint's order:
 * every row takes its message's first row's message_id and the id of its
 * last row. One statement per message, in one transaction, before the first
 * attempt, so a retry, a resend, or a send again after a crash carries the
 * same records under the same webhook-id. A row already in a message keeps it.
 */
export async function formMessages(db: Db, messages: readonly (readonly DeliveryRow[])[]): Promise<void> {
  const formed = messages.filter((rows) => rows.length > 0);
  if (formed.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const rows of formed) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ message_id: rows[0]!.message_id, message_last_id: rows.at(-1)!.id })
        .where(
          'id',
          'in',
          rows.map((row) => row.id),
        )
        .where('message_last_id', 'is', null)
        .execute();
    }
  });
}

/** The pending rows of the message `head` (a formed one) begins, in order: what its first attempt sent. */
export function messageRows(db: Db, head: DeliveryRow): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', head.webhook_id)
    .where('state', '=', 'pending')
    .where('id', '>=', head.id)
    .where('id', '<=', head.message_last_id ?? head.id)
    .where('message_id', '=', head.message_id)
    .orderBy('id')
    .execute();
}

/** One attempt of a message: its outcome, for each delivery it carried. */
export interface MessageAttempt {
  /** The deliveries the message carried. */
  deliveryIds: number[];
  outcome: 'delivered' | 'failed';
  response_code: number | null;
  response_excerpt: string | null;
  error: string | null;
  at: string;
}

/**
 * The attempts of several messages in one transaction, and what they change:
 * their deliveries counted (and delivered), an attempt row for each, and the
 * endpoint healthy again, or backed off (or disabled) after the last failed.
 */
export async function recordOutcomes(
  db: Db,
  webhookId: number,
  attempts: readonly MessageAttempt[],
  endpoint: { nextAttemptAt: string | null; failingSince: string | null; disabledReason: string | null; changed: boolean },
): Promise<void> {
  if (attempts.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const attempt of attempts) {
      const ids = attempt.deliveryIds;
      // The deliveries first: their row locks make a deletion of the webhook that comes after wait, then take these
      // attempts too (deleteWebhook).
      await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempts: eb('attempts', '+', 1),
          ...(attempt.outcome === 'delivered' ? { state: 'delivered', delivered_at: attempt.at } : {}),
        }))
        .where('id', 'in', ids)
        .execute();
      // One attempt row per delivery still there (a delivery gone with its webhook meanwhile keeps none), numbered by
      // its count just made: one statement, whatever the number of deliveries.
      await trx
        .insertInto('webhook_attempts')
        .columns(['delivery_id', 'webhook_id', 'attempt', 'outcome', 'response_code', 'response_excerpt', 'error', 'at'])
        .expression((eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select([
              'id',
              'webhook_id',
              'attempts',
              // Cast: PostgreSQL types a parameter in a select list by its use, and here it has none.
              sql<string>`cast(${attempt.outcome} as text)`.as('outcome'),
              sql<number | null>`cast(${attempt.response_code} as integer)`.as('response_code'),
              sql<string | null>`cast(${attempt.response_excerpt} as text)`.as('response_excerpt'),
              sql<string | null>`cast(${attempt.error} as text)`.as('error'),
              sql<string>`cast(${attempt.at} as text)`.as('at'),
            ])
            .where('id', 'in', ids)
            .orderBy('id'),
        )
        .execute();
    }
    // Deliveries to a healthy endpoint leave it as it was: one statement fewer.
    if (!endpoint.changed) return;
    const at = attempts.at(-1)!.at;
    await trx
      .updateTable('webhooks')
      .set({
        next_attempt_at: endpoint.nextAttemptAt,
        failing_since: endpoint.failingSince,
        ...(endpoint.disabledReason !== null ? { enabled: 0, disabled_reason: endpoint.disabledReason, updated_at: at } : {}),
      })
      .where('id', '=', webhookId)
      .execute();
  });
}

/**
 * A delivery again, with the other deliveries of its message: pending once
 * more, so the same body goes with the same webhook-id (receivers drop what
 * they already have), tried now, before the endpoint's later events. False
 * when the endpoint has no such delivery.
 */
export async function resendDelivery(db: Db, webhookId: number, deliveryId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('webhook_deliveries')
      .select(['message_id', 'message_last_id'])
      .where('id', '=', deliveryId)
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst();
    if (!row) return false;
    await trx
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', delivered_at: null })
      .where('webhook_id', '=', webhookId)
      .$if(row.message_last_id === null, (q) => q.where('id', '=', deliveryId))
      .$if(row.message_last_id !== null, (q) => q.where('message_id', '=', row.message_id).where('id', '<=', row.message_last_id!))
      .execute();
    await trx.updateTable('webhooks').set({ next_attempt_at: null }).where('id', '=', webhookId).execute();
    return true;
  });
}

/** The endpoint's recent deliveries, newest first, each with its latest attempt. */
export async function recentDeliveries(db: Db, webhookId: number, limit: number) {
  const deliveries = await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('id', 'desc').limit(limit).execute();
  if (deliveries.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      deliveries.map((delivery) => delivery.id),
    )
    .orderBy('id')
    .execute();
  return deliveries.map((delivery) => ({ ...delivery, attemptLog: attempts.filter((attempt) => attempt.delivery_id === delivery.id) }));
}

/** Pending deliveries of one endpoint (what a backlog holds). */
export async function pendingCount(db: Db, webhookId: number): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select(sql<number>`count(*)`.as('n'))
    .where('webhook_id', '=', webhookId)
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deliveries removed by one statement of pruneDelivered: small, so a pass never holds the database for long. */
const PRUNE_BATCH = 500;

/**
 * Removes delivered events (and their attempts) delivered before `before`, a
 * batch at a time, oldest first; pending and failing ones stay, whatever
 * their age. Returns how many went.
 */
export async function pruneDelivered(db: Db, before: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const ids = (
      await db
        .selectFrom('webhook_deliveries')
        .select('id')
        // A literal, as the partial index names it (migration 0026): a parameter would not prove the index applies.
        .where('state', '=', sql.lit('delivered'))
        .where('delivered_at', '<', before)
        .orderBy('delivered_at')
        .limit(PRUNE_BATCH)
        .execute()
    ).map((row) => row.id);
    if (ids.length === 0) return removed;
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
      await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
    });
    removed += ids.length;
    if (ids.length < PRUNE_BATCH) return removed;
  }
}
