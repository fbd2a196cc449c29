/**
 * "Keep deleted and replaced files for N days": versioning on, plus one
 * lifecycle rule under a fixed id that removes old versions N days after they
 * stopped being current and then the delete markers left alone. The bucket's
 * other rules are left as they are.
 */
import type { LifecycleRule, StorageBucket } from '@pail/shared';

export type Versioning = 'unversioned' | 'enabled' | 'suspended';

export const TRASH_RULE_ID = 'pail-trash';
export const DEFAULT_TRASH_DAYS = 30;
export const MAX_TRASH_DAYS = 3650;

export const versioningOf = (bucket: StorageBucket): Versioning => (bucket as { versioning?: Versioning }).versioning ?? 'unversioned';
export const noncurrentBytesOf = (bucket: StorageBucket): number => (bucket as { noncurrent_bytes?: number }).noncurrent_bytes ?? 0;

/** The trash's days when it is on (versioning enabled and the rule there), else null. */
export function trashDaysOf(versioning: Versioning, rules: readonly LifecycleRule[]): number | null {
  if (versioning !== 'enabled') return null;
  const rule = rules.find((r) => r.id === TRASH_RULE_ID && r.status === 'enabled');
  return rule?.noncurrent_version_expiration?.noncurrent_days ?? null;
}

export function trashRule(days: number): LifecycleRule {
  return {
    id: TRASH_RULE_ID,
    status: 'enabled',
    filter: { prefix: '' },
    noncurrent_version_expiration: { noncurrent_days: days },
    expiration: { expired_object_delete_marker: true },
  };
}

/** The rules with the trash's set to `days` (null: without it). */
export function rulesWithTrash(rules: readonly LifecycleRule[], days: number | null): LifecycleRule[] {
  const others = rules.filter((r) => r.id !== TRASH_RULE_ID);
  return days === null ? others : [...others, trashRule(days)];
}

/** Why these days cannot be kept, or null. */
export function trashDaysProblem(text: string): string | null {
  const days = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || days < 1 || days > MAX_TRASH_DAYS) return `Enter a whole number of days from 1 to ${MAX_TRASH_DAYS}.`;
  return null;
}

/** Who deleted a file, from the server's `deleted_by` (key:<id>, session:<user>, operator, …). */
export function describeDeleter(deletedBy: string | null | undefined): string {
  if (!deletedBy) return 'Unknown';
  if (deletedBy.startsWith('session:')) return 'You (dashboard)';
  if (deletedBy.startsWith('key:')) return `API key #${deletedBy.slice('key:'.length)}`;
  if (deletedBy === 'operator') return 'The operator';
  if (deletedBy === 'lifecycle') return 'A lifecycle rule';
  return deletedBy;
}
