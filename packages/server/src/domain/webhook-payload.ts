/**
 * A message's body: S3's event notification JSON (Records[], eventVersion
 * 2.1), so handlers written for S3 events read it as is, one record per
 * delivery the message carries, in the endpoint's order. Rendered from the
 * outbox rows alone, so every attempt of one message sends the same bytes.
 */
import type { DeliveryRow } from '../db/repositories/webhook-outbox.js';

/** An object key as S3 writes it in events: form-urlencoded (a space is `+`), slashes kept. */
export function s3EventKey(key: string): string {
  return encodeURIComponent(key)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
    .replace(/%2F/g, '/');
}

/** S3's sequencer: hexadecimal, growing with the endpoint's events; fixed width, so strings compare as numbers do. */
export const sequencerOf = (id: number): string => id.toString(16).toUpperCase().padStart(16, '0');

/** One delivery's record, as JSON: a message's body joins several (messageBody). */
export function eventRecord(delivery: DeliveryRow, region: string): string {
  const principal = { principalId: delivery.principal ?? 'pail' };
  const object =
    delivery.object_key === null
      ? undefined
      : {
          key: s3EventKey(delivery.object_key),
          ...(delivery.size !== null ? { size: Number(delivery.size) } : {}),
          ...(delivery.etag !== null ? { eTag: delivery.etag } : {}),
          ...(delivery.version_id !== null ? { versionId: delivery.version_id } : {}),
          sequencer: sequencerOf(delivery.id),
        };
  const record = {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: region,
    eventTime: delivery.event_time,
    eventName: delivery.event_name,
    userIdentity: principal,
    requestParameters: { sourceIPAddress: '' },
    responseElements: {},
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: `webhook-${delivery.webhook_id}`,
      bucket: { name: delivery.bucket_name, ownerIdentity: principal, arn: `arn:aws:s3:::${delivery.bucket_name}` },
      ...(object ? { object } : {}),
    },
    // Pail's own name for the event (object.created, bucket.deleted, …): S3 has none for a bucket's events.
    pail: { event: delivery.event, sequencer: sequencerOf(delivery.id) },
  };
  return JSON.stringify(record);
}

/** The body of a message of these records (eventRecord), in their order. */
export const messageBody = (records: readonly string[]): string => `{"Records":[${records.join(',')}]}`;
