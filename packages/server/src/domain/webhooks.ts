/**
 * A bucket's webhooks (issue 39): made, listed, changed (enabled, paused),
 * their secret rotated with an overlap, deleted; their recent deliveries and
 * a resend. Each change is forgotten by the commit paths' cached lookup
 * (webhook-events.ts) on every instance before it is answered, and recorded
 * in the owner's audit log.
 */
import { isUnfitText, type CreateWebhookInput, type UpdateWebhookInput, type Webhook, type WebhookDelivery, type WebhookWithSecret } from '@pail/shared';
import { randomBytes } from 'node:crypto';
import type { Caches } from '../cache/caches.js';
import { pendingCount, recentDeliveries, resendDelivery } from '../db/repositories/webhook-outbox.js';
import { deleteWebhook, findWebhook, insertWebhook, listWebhooks, updateWebhook, type WebhookChange, type WebhookRow } from '../db/repositories/webhooks.js';
import type { Db } from '../db/schema.js';
import { recordAudit, type Actor } from './audit.js';
import { getOwnBucket } from './buckets.js';
import { nowIso } from './clock.js';
import { AppError, errors } from './errors.js';
import { SHOWN_PREFIX_LENGTH, type WebhookSecrets } from './webhook-secrets.js';
import { resolveWebhookUrl, UnsafeWebhookUrl } from './webhook-urls.js';

/** Webhooks one bucket may have. */
export const MAX_WEBHOOKS_PER_BUCKET = 10;
const MAX_DELIVERIES_LISTED = 100;

export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE: http and private addresses allowed. */
  allowPrivate: boolean;
  /** How long a rotated-out secret keeps signing beside the new one. */
  secretOverlapSeconds: number;
  /** Tells the deliverer there may be work now (a resend, an endpoint enabled again). */
  wake: () => void;
  /** How secrets are stored (sealed). */
  secrets: WebhookSecrets;
}

type Ports = { db: Db; caches: Caches };

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

async function view(db: Db, row: WebhookRow): Promise<Webhook> {
  return {
    id: row.id,
    bucket_id: row.bucket_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    prefix: row.prefix,
    suffix: row.suffix,
    enabled: row.enabled === 1,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since,
    pending: await pendingCount(db, row.id),
    secret_prefix: row.secret.slice(0, SHOWN_PREFIX_LENGTH),
    previous_secret_until: row.previous_secret_until !== null && Date.parse(row.previous_secret_until) > Date.now() ? row.previous_secret_until : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The url checked now (syntax, scheme, the addresses its name resolves to); refused as a validation error. */
async function checkedUrl(url: string, settings: WebhookSettings): Promise<string> {
  try {
    return (await resolveWebhookUrl(url.trim(), settings.allowPrivate)).url.toString();
  } catch (error) {
    if (error instanceof UnsafeWebhookUrl) throw errors.validation(error.message);
    throw error;
  }
}

const parseId = (raw: string): number => {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw webhookNotFound();
  return Number(raw);
};

const webhookNotFound = () => new AppError('NotFound', 'Webhook not found');

async function ownWebhook(db: Db, ownerId: number, rawBucketId: string, rawWebhookId: string): Promise<WebhookRow> {
  const bucket = await getOwnBucket(db, ownerId, rawBucketId);
  const row = await findWebhook(db, bucket.id, parseId(rawWebhookId));
  if (!row) throw webhookNotFound();
  return row;
}

/** A prefix or suffix filter as kept: none for empty; no filename holds a control character, so none may (PostgreSQL refuses a NUL). */
function filter(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (isUnfitText(value)) throw errors.validation('A prefix or suffix must not contain control characters');
  return value;
}

export async function createWebhook(
  ports: Ports,
  ownerId: number,
  rawBucketId: string,
  input: CreateWebhookInput,
  settings: WebhookSettings,
  actor: Actor,
): Promise<WebhookWithSecret> {
  const bucket = await getOwnBucket(ports.db, ownerId, rawBucketId);
  const url = await checkedUrl(input.url, settings);
  if ((await listWebhooks(ports.db, bucket.id)).length >= MAX_WEBHOOKS_PER_BUCKET) {
    throw errors.forbidden(`Limit reached: a bucket may have at most ${MAX_WEBHOOKS_PER_BUCKET} webhooks; delete one first`);
  }
  const secret = newSecret();
  const row = await insertWebhook(ports.db, {
    bucket_id: bucket.id,
    owner_id: ownerId,
    url,
    events: JSON.stringify([...new Set(input.events)]),
    prefix: filter(input.prefix),
    suffix: filter(input.suffix),
    secret: settings.secrets.stored(bucket.id, secret),
    created_at: nowIso(),
  });
  // From the answer on, every commit into the bucket, on every instance, writes its events.
  await ports.caches.changed('buckets');
  await recordAudit(ports.db, {
    userId: ownerId,
    actor,
    action: 'webhook.created',
    target: `bucket:${bucket.id}/webhook:${row.id}`,
    details: { url, events: input.events },
  });
  return { ...(await view(ports.db, row)), secret };
}

export async function listBucketWebhooks(ports: Ports, ownerId: number, rawBucketId: string): Promise<Webhook[]> {
  const bucket = await getOwnBucket(ports.db, ownerId, rawBucketId);
  return Promise.all((await listWebhooks(ports.db, bucket.id)).map((row) => view(ports.db, row)));
}

export async function getBucketWebhook(ports: Ports, ownerId: number, rawBucketId: string, rawWebhookId: string): Promise<Webhook> {
  return view(ports.db, await ownWebhook(ports.db, ownerId, rawBucketId, rawWebhookId));
}

/** Changes what it hears or where it goes; enabled false pauses it, true resumes it (a disabled one from its failing delivery, tried at once). */
export async function updateBucketWebhook(
  ports: Ports,
  ownerId: number,
  rawBucketId: string,
  rawWebhookId: string,
  input: UpdateWebhookInput,
  settings: WebhookSettings,
  actor: Actor,
): Promise<Webhook> {
  const row = await ownWebhook(ports.db, ownerId, rawBucketId, rawWebhookId);
  const change: WebhookChange = {};
  if (input.url !== undefined) change.url = await checkedUrl(input.url, settings);
  if (input.events !== undefined) change.events = JSON.stringify([...new Set(input.events)]);
  if (input.prefix !== undefined) change.prefix = filter(input.prefix);
  if (input.suffix !== undefined) change.suffix = filter(input.suffix);
  if (input.enabled !== undefined) {
    change.enabled = input.enabled ? 1 : 0;
    if (input.enabled) Object.assign(change, { disabled_reason: null, failing_since: null, next_attempt_at: null });
  }
  const updated = Object.keys(change).length === 0 ? row : await updateWebhook(ports.db, row.id, change, nowIso());
  if (!updated) throw webhookNotFound();
  await ports.caches.changed('buckets');
  if (Object.keys(change).length > 0) {
    await recordAudit(ports.db, {
      userId: ownerId,
      actor,
      action: 'webhook.updated',
      target: `bucket:${row.bucket_id}/webhook:${row.id}`,
      details: { ...input },
    });
  }
  if (input.enabled) settings.wake();
  return view(ports.db, updated);
}

/** A new secret, shown once; the old one keeps signing beside it (a second signature) for the overlap, so receivers can switch without missing a delivery. */
export async function rotateWebhookSecret(
  ports: Ports,
  ownerId: number,
  rawBucketId: string,
  rawWebhookId: string,
  settings: WebhookSettings,
  actor: Actor,
): Promise<WebhookWithSecret> {
  const row = await ownWebhook(ports.db, ownerId, rawBucketId, rawWebhookId);
  const secret = newSecret();
  const until = new Date(Date.now() + settings.secretOverlapSeconds * 1000).toISOString();
  const updated = await updateWebhook(
    ports.db,
    row.id,
    { secret: settings.secrets.stored(row.bucket_id, secret), previous_secret: row.secret, previous_secret_until: until },
    nowIso(),
  );
  if (!updated) throw webhookNotFound();
  await recordAudit(ports.db, {
    userId: ownerId,
    actor,
    action: 'webhook.secret_rotated',
    target: `bucket:${row.bucket_id}/webhook:${row.id}`,
    details: { previous_secret_until: until },
  });
  return { ...(await view(ports.db, updated)), secret };
}

/** Deletes it with its undelivered events and its attempts. */
export async function deleteBucketWebhook(ports: Ports, ownerId: number, rawBucketId: string, rawWebhookId: string, actor: Actor): Promise<void> {
  const row = await ownWebhook(ports.db, ownerId, rawBucketId, rawWebhookId);
  await deleteWebhook(ports.db, row.id);
  await ports.caches.changed('buckets');
  await recordAudit(ports.db, {
    userId: ownerId,
    actor,
    action: 'webhook.deleted',
    target: `bucket:${row.bucket_id}/webhook:${row.id}`,
    details: { url: row.url },
  });
}

export async function webhookDeliveries(ports: Ports, ownerId: number, rawBucketId: string, rawWebhookId: string): Promise<WebhookDelivery[]> {
  const row = await ownWebhook(ports.db, ownerId, rawBucketId, rawWebhookId);
  return (await recentDeliveries(ports.db, row.id, MAX_DELIVERIES_LISTED)).map((delivery) => ({
    id: delivery.id,
    webhook_id_header: delivery.message_id,
    event: delivery.event,
    event_name: delivery.event_name,
    key: delivery.object_key,
    version_id: delivery.version_id,
    status: delivery.state,
    attempts: delivery.attempts,
    created_at: delivery.event_time,
    delivered_at: delivery.delivered_at,
    response_code: delivery.attemptLog.at(-1)?.response_code ?? null,
    attempt_log: delivery.attemptLog.map((attempt) => ({
      attempt: attempt.attempt,
      outcome: attempt.outcome,
      response_code: attempt.response_code,
      response_excerpt: attempt.response_excerpt,
      error: attempt.error,
      at: attempt.at,
    })),
  }));
}

/** Sends a delivery again (same body, same webhook-id), now. */
export async function resendWebhookDelivery(
  ports: Ports,
  ownerId: number,
  rawBucketId: string,
  rawWebhookId: string,
  rawDeliveryId: string,
  settings: WebhookSettings,
): Promise<void> {
  const row = await ownWebhook(ports.db, ownerId, rawBucketId, rawWebhookId);
  if (!(await resendDelivery(ports.db, row.id, parseId(rawDeliveryId)))) throw new AppError('NotFound', 'Delivery not found');
  settings.wake();
}
