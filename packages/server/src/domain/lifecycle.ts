/**
 * A bucket's lifecycle configuration, kept and read for both doors (S3's
 * ?lifecycle, the Pail API's …/lifecycle): checked once by
 * lifecycle-rules.ts, kept as one JSON list per bucket. The sweep that
 * applies the rules is lifecycle-sweep.ts.
 */
import { LifecycleConfigurationSchema } from '@pail/shared';
import { Value } from '@sinclair/typebox/value';
import { deleteLifecycleRules, findLifecycleRules, saveLifecycleRules } from '../db/repositories/bucket-lifecycle.js';
import type { Db } from '../db/schema.js';
import { OPERATOR, recordAudit, type Actor } from './audit.js';
import { errors } from './errors.js';
import { validateLifecycleRules, type LifecycleRule } from './lifecycle-rules.js';

export const parseLifecycleRules = (json: string): LifecycleRule[] => JSON.parse(json) as LifecycleRule[];

/** The bucket's rules, or null when it has no lifecycle configuration. */
export async function getBucketLifecycle(db: Db, bucketId: number): Promise<LifecycleRule[] | null> {
  const json = await findLifecycleRules(db, bucketId);
  return json === undefined ? null : parseLifecycleRules(json);
}

/** Replaces the bucket's rules whole (as S3's PutBucketLifecycleConfiguration does); returns them as kept. */
export async function putBucketLifecycle(
  ports: LifecyclePorts,
  bucket: AuditedBucket,
  rules: readonly LifecycleRule[],
  actor: Actor = OPERATOR,
): Promise<LifecycleRule[]> {
  const kept = validateLifecycleRules(rules);
  await saveLifecycleRules(ports.db, bucket.id, JSON.stringify(kept));
  await rulesChanged(ports);
  await recordAudit(ports.db, {
    userId: bucket.owner_id,
    actor,
    action: 'bucket.lifecycle_changed',
    target: `bucket:${bucket.id}`,
    details: { rules: kept.length },
  });
  return kept;
}

export async function deleteBucketLifecycle(ports: LifecyclePorts, bucket: AuditedBucket, actor: Actor = OPERATOR): Promise<void> {
  await deleteLifecycleRules(ports.db, bucket.id);
  await rulesChanged(ports);
  await recordAudit(ports.db, { userId: bucket.owner_id, actor, action: 'bucket.lifecycle_changed', target: `bucket:${bucket.id}`, details: { rules: 0 } });
}

/** Where a change of rules is written, and the caches that hold rules with a bucket (the expiry reads and writes tell). */
type LifecyclePorts = { db: Db; caches: { changed(kind: 'buckets' | 'objects'): Promise<void> | undefined } };

/** The rules ride with the cached bucket rules (writes) and the cached bucket-and-file lookups (reads): both are forgotten, on every instance. */
async function rulesChanged(ports: LifecyclePorts): Promise<void> {
  await Promise.all([ports.caches.changed('buckets'), ports.caches.changed('objects')]);
}

/** What a change of a bucket's rules needs of it: which bucket, and whose audit log records the change. */
type AuditedBucket = { id: number; owner_id: number };

/**
 * Rules from a JSON text (the CLI's file: `{"rules": […]}` or the list alone), checked against the Pail API's
 * schema as a request body is; putBucketLifecycle checks the rest.
 */
export function lifecycleRulesFromJson(text: string): LifecycleRule[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw errors.validation('The lifecycle rules are not JSON');
  }
  const configuration = Array.isArray(parsed) ? { rules: parsed } : parsed;
  const mistake = Value.Errors(LifecycleConfigurationSchema, configuration).First();
  if (mistake !== undefined) throw errors.validation(`The lifecycle rules do not fit the schema: ${mistake.path || '/'} ${mistake.message}`);
  return (configuration as { rules: LifecycleRule[] }).rules;
}
