/** A bucket's webhooks (migrations/events.ts): their settings, secrets and state. */
import type { Db } from '../schema.js';
import type { WebhookRow } from './webhook-outbox.js';

export type { WebhookRow };

export interface NewWebhook {
  bucket_id: number;
  owner_id: number;
  url: string;
  events: string;
  prefix: string | null;
  suffix: string | null;
  secret: string;
  created_at: string;
}

export function insertWebhook(db: Db, webhook: NewWebhook): Promise<WebhookRow> {
  return db
    .insertInto('webhooks')
    .values({ ...webhook, enabled: 1, updated_at: webhook.created_at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listWebhooks(db: Db, bucketId: number): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('bucket_id', '=', bucketId).orderBy('id').execute();
}

export async function findWebhook(db: Db, bucketId: number, webhookId: number): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('bucket_id', '=', bucketId).where('id', '=', webhookId).executeTakeFirst();
}

export type WebhookChange = Partial<
  Pick<
    WebhookRow,
    | 'url'
    | 'events'
    | 'prefix'
    | 'suffix'
    | 'enabled'
    | 'disabled_reason'
    | 'secret'
    | 'previous_secret'
    | 'previous_secret_until'
    | 'failing_since'
    | 'next_attempt_at'
  >
>;

export async function updateWebhook(db: Db, webhookId: number, change: WebhookChange, at: string): Promise<WebhookRow | undefined> {
  return db
    .updateTable('webhooks')
    .set({ ...change, updated_at: at })
    .where('id', '=', webhookId)
    .returningAll()
    .executeTakeFirst();
}

/** The webhook with its outbox and attempts. */
export async function deleteWebhook(db: Db, webhookId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Deliveries first: an attempt being recorded holds its delivery's row, so the attempts are read after it is kept.
    await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', webhookId).execute();
    await trx.deleteFrom('webhook_attempts').where('webhook_id', '=', webhookId).execute();
    await trx.deleteFrom('webhooks').where('id', '=', webhookId).execute();
  });
}

/** What the commit paths match events against: a live bucket's enabled webhooks, with the bucket's name. */
export async function enabledTargets(db: Db, bucketId: number) {
  return db
    .selectFrom('webhooks')
    .innerJoin('buckets', 'buckets.id', 'webhooks.bucket_id')
    .select(['webhooks.id', 'webhooks.events', 'webhooks.prefix', 'webhooks.suffix', 'buckets.name as bucket_name'])
    .where('webhooks.bucket_id', '=', bucketId)
    .where('webhooks.enabled', '=', 1)
    .orderBy('webhooks.id')
    .execute();
}
