/** Migrations 0022 (webhooks and their outbox) and 0023 (the audit log): issue 39. */
import { type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';

/**
 * A bucket's webhooks, the outbox of deliveries (one row per event and
 * webhook, written in the transaction of the change it reports) and every
 * attempt made to deliver one. The delivery's id is its place in the
 * endpoint's order (S3's sequencer); the lease columns let one instance at a
 * time deliver to an endpoint.
 */
export function webhookEvents(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhooks')
        .addColumn('id', c.idType, c.id)
        .addColumn('bucket_id', c.idType, (col) => col.notNull().references('buckets.id'))
        .addColumn('owner_id', c.idType, (col) => col.notNull().references('users.id'))
        .addColumn('url', 'text', (col) => col.notNull())
        .addColumn('events', 'text', (col) => col.notNull())
        .addColumn('prefix', 'text')
        .addColumn('suffix', 'text')
        .addColumn('enabled', 'integer', (col) => col.notNull())
        .addColumn('disabled_reason', 'text')
        .addColumn('secret', 'text', (col) => col.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_until', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addColumn('failing_since', 'text')
        .addColumn('next_attempt_at', 'text')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'text')
        .execute();
      await db.schema.createIndex('webhooks_bucket').on('webhooks').columns(['bucket_id']).execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', c.idType, c.id)
        .addColumn('webhook_id', c.idType, (col) => col.notNull())
        .addColumn('message_id', 'text', (col) => col.notNull())
        .addColumn('event', 'text', (col) => col.notNull())
        .addColumn('event_name', 'text', (col) => col.notNull())
        .addColumn('bucket_name', 'text', (col) => col.notNull())
        .addColumn('object_key', 'text')
        .addColumn('size', 'bigint')
        .addColumn('etag', 'text')
        .addColumn('principal', 'text')
        .addColumn('event_time', 'text', (col) => col.notNull())
        .addColumn('state', 'text', (col) => col.notNull())
        .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('delivered_at', 'text')
        .execute();
      await db.schema.createIndex('webhook_deliveries_queue').on('webhook_deliveries').columns(['webhook_id', 'state', 'id']).execute();
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', c.idType, c.id)
        .addColumn('delivery_id', c.idType, (col) => col.notNull())
        .addColumn('webhook_id', c.idType, (col) => col.notNull())
        .addColumn('attempt', 'integer', (col) => col.notNull())
        .addColumn('outcome', 'text', (col) => col.notNull())
        .addColumn('response_code', 'integer')
        .addColumn('response_excerpt', 'text')
        .addColumn('error', 'text')
        .addColumn('at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_webhook').on('webhook_attempts').columns(['webhook_id', 'id']).execute();
    },
  };
}

/** Who changed what, per user; rows are only ever inserted (domain/audit.ts). */
export function auditLog(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('audit_log')
        .addColumn('id', c.idType, c.id)
        .addColumn('user_id', c.idType, (col) => col.notNull())
        .addColumn('actor', 'text', (col) => col.notNull())
        .addColumn('action', 'text', (col) => col.notNull())
        .addColumn('target', 'text')
        .addColumn('details', 'text')
        .addColumn('at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('audit_log_user').on('audit_log').columns(['user_id', 'id']).execute();
    },
  };
}
