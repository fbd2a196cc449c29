/**
 * Which webhook events a change makes, written by the change's own
 * transaction (the outbox, issue 39): a commit asks outboxFor() before it
 * runs, and passes the rows to db/ with the change. A bucket without an
 * enabled webhook that matches costs a cached lookup and no row.
 */
import { randomUUID } from 'node:crypto';
import type { WebhookTargets } from '../cache/caches.js';
import type { MetadataCache } from '../cache/metadata-cache.js';
import type { OutboxEvent } from '../db/repositories/webhook-outbox.js';
import { enabledTargets } from '../db/repositories/webhooks.js';
import type { Db } from '../db/schema.js';
import { nowIso } from './clock.js';

export const WEBHOOK_EVENTS = ['object.created', 'object.removed', 'object.restored', 'bucket.visibility_changed', 'bucket.deleted'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** One change as a webhook reports it; eventName is S3's (s3:ObjectCreated:Put, …). */
export interface EventChange {
  event: WebhookEvent;
  eventName: string;
  /** The object's name; null for a bucket's events. */
  key: string | null;
  size?: number;
  etag?: string;
  /** The version it is about, as clients see it; where only the commit knows it, the commit fills it in (withVersionMade). */
  versionId?: string;
  /** Who made it, as S3's userIdentity.principalId. */
  principal?: string | null;
}

type TargetPorts = { db: Db; caches: { readonly webhookTargets: MetadataCache<WebhookTargets> | null } };

/**
 * The outbox rows of `changes` in the bucket, one per change and matching
 * webhook; undefined when there is none. Synchronous when the bucket's
 * webhooks are cached, so an upload into a bucket without any waits for nothing.
 */
export function outboxFor(ports: TargetPorts, bucketId: number, changes: EventChange[]): OutboxEvent[] | undefined | Promise<OutboxEvent[] | undefined> {
  const cached = ports.caches.webhookTargets?.get(String(bucketId));
  if (cached) return rowsFor(cached, changes);
  return targetsOf(ports, bucketId).then((targets) => rowsFor(targets, changes));
}

async function targetsOf(ports: TargetPorts, bucketId: number): Promise<WebhookTargets> {
  const cache = ports.caches.webhookTargets;
  const mark = cache?.mark();
  const rows = await enabledTargets(ports.db, bucketId);
  const targets: WebhookTargets = {
    targets: rows.map((row) => ({
      id: row.id,
      events: JSON.parse(row.events) as string[],
      prefix: row.prefix,
      suffix: row.suffix,
      bucketName: row.bucket_name,
    })),
  };
  if (cache && mark !== undefined) cache.set(String(bucketId), targets, mark);
  return targets;
}

function rowsFor({ targets }: WebhookTargets, changes: EventChange[]): OutboxEvent[] | undefined {
  if (targets.length === 0) return undefined;
  const eventTime = nowIso();
  const rows: OutboxEvent[] = [];
  for (const change of changes) {
    for (const target of targets) {
      if (!matches(target, change)) continue;
      rows.push({
        webhook_id: target.id,
        // Node's pooled randomUUID(): a randomBytes() call per event cost a system call on the commit's path.
        message_id: `msg_${randomUUID().replaceAll('-', '')}`,
        event: change.event,
        event_name: change.eventName,
        bucket_name: target.bucketName,
        object_key: change.key,
        size: change.size ?? null,
        etag: change.etag ?? null,
        version_id: change.versionId ?? null,
        principal: change.principal ?? null,
        event_time: eventTime,
      });
    }
  }
  return rows.length > 0 ? rows : undefined;
}

/** A webhook hears the events it names, for object names within its prefix and suffix (a bucket's events always). */
function matches(target: WebhookTargets['targets'][number], change: EventChange): boolean {
  if (!target.events.includes(change.event)) return false;
  if (change.key === null) return true;
  if (target.prefix !== null && !change.key.startsWith(target.prefix)) return false;
  return target.suffix === null || change.key.endsWith(target.suffix);
}

/** S3's eventName for a new version, by the operation of the door that made it. */
export function createdEventName(operation: string | null | undefined, cause: 'stored' | 'moved' = 'stored'): string {
  if (cause === 'moved' || operation === 'CopyObject') return 's3:ObjectCreated:Copy';
  if (operation === 'CompleteMultipartUpload') return 's3:ObjectCreated:CompleteMultipartUpload';
  if (operation === 'PostObject') return 's3:ObjectCreated:Post';
  return 's3:ObjectCreated:Put';
}

/** A new version's object.created event. */
export const createdChange = (key: string, size: number, etag: string, operation: string | null | undefined, principal: string | null): EventChange => ({
  event: 'object.created',
  eventName: createdEventName(operation),
  key,
  size,
  etag,
  principal,
});

/** The operation name the lifecycle sweep's deletes are made under, as a door names its requests. */
export const LIFECYCLE_OPERATION = 'lifecycle';

/**
 * A file's removal: a delete, or (versioned buckets) a delete marker made; `versionId`: the version deleted for good.
 * The lifecycle sweep's are S3's LifecycleExpiration events, so a handler can tell an expiry from a user's delete.
 */
export function removedChange(
  key: string,
  principal: string | null,
  how: { marker?: boolean; operation?: string | undefined; versionId?: string } = {},
): EventChange {
  const family = how.operation === LIFECYCLE_OPERATION ? 's3:LifecycleExpiration' : 's3:ObjectRemoved';
  return {
    event: 'object.removed',
    eventName: `${family}:${how.marker === true ? 'DeleteMarkerCreated' : 'Delete'}`,
    key,
    principal,
    ...(how.versionId !== undefined ? { versionId: how.versionId } : {}),
  };
}

/**
 * What a new version announces: object.restored when it is a restore of an older one (`restored`, whichever door
 * asked: the operation names the door, for the audit and metrics, not what happened), else object.created.
 */
export const writtenChange = (
  key: string,
  size: number,
  etag: string,
  door: { operation?: string | null | undefined; restored?: boolean | undefined },
  principal: string | null,
): EventChange => (door.restored === true ? restoredChange(key, size, etag, principal) : createdChange(key, size, etag, door.operation, principal));

/** A version restored (versioned buckets): a copy of it made the current version, through the same outbox. */
export const restoredChange = (key: string, size: number, etag: string, principal: string | null): EventChange => ({
  event: 'object.restored',
  eventName: 's3:ObjectRestore:Completed',
  key,
  size,
  etag,
  principal,
});

export const visibilityChange = (isPublic: boolean, principal: string | null): EventChange => ({
  event: 'bucket.visibility_changed',
  eventName: isPublic ? 'pail:BucketVisibilityChanged:Public' : 'pail:BucketVisibilityChanged:Private',
  key: null,
  principal,
});

export const bucketDeletedChange = (principal: string | null): EventChange => ({
  event: 'bucket.deleted',
  eventName: 'pail:BucketDeleted',
  key: null,
  principal,
});
