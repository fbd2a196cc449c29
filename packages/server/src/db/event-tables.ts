/** The tables of issue 39 (migrations/events.ts): webhooks, their outbox and attempts, the audit log. */
import type { Generated } from 'kysely';

export interface WebhooksTable {
  id: Generated<number>;
  bucket_id: number;
  owner_id: number;
  url: string;
  /** A JSON list of event types (object.created, …). */
  events: string;
  prefix: string | null;
  suffix: string | null;
  enabled: number;
  /** Why the server disabled it (3 days of failures); null when enabled or disabled by its owner. */
  disabled_reason: string | null;
  /** `whsec_…` (Standard Webhooks). */
  secret: string;
  /** The secret a rotation replaced, still signing beside the new one until previous_secret_until. */
  previous_secret: string | null;
  previous_secret_until: string | null;
  created_at: string;
  updated_at: string;
  /** When the delivery at the head of its queue first failed; null while deliveries succeed. */
  failing_since: string | null;
  /** No delivery is tried before this (the backoff of the failing head). */
  next_attempt_at: string | null;
  /** The instance delivering to it now, until lease_until. */
  lease_owner: string | null;
  lease_until: string | null;
}

export interface WebhookDeliveriesTable {
  /** The order of the endpoint's events; S3's sequencer. */
  id: Generated<number>;
  webhook_id: number;
  /** webhook-id: the same on every attempt and resend of the message the event goes in (its first event's). */
  message_id: string;
  /** The id of the last delivery of that message, set when the message is formed (at its first attempt); null before. */
  message_last_id: number | null;
  event: string;
  /** S3's eventName (s3:ObjectCreated:Put, …). */
  event_name: string;
  bucket_name: string;
  object_key: string | null;
  size: number | null;
  etag: string | null;
  /** The version the event is about as S3 shows it (`null`: the null version); null where it names none. */
  version_id: string | null;
  principal: string | null;
  event_time: string;
  /** pending or delivered. */
  state: string;
  attempts: Generated<number>;
  delivered_at: string | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  webhook_id: number;
  attempt: number;
  /** delivered or failed. */
  outcome: string;
  response_code: number | null;
  /** At most 1 KiB of the response body. */
  response_excerpt: string | null;
  error: string | null;
  at: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  user_id: number;
  /** `key:<id>`, `session:<id>`, `operator`, … */
  actor: string;
  action: string;
  target: string | null;
  /** JSON. */
  details: string | null;
  at: string;
}

export interface EventTables {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  audit_log: AuditLogTable;
}
