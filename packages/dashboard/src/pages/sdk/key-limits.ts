/**
 * The limits a new API key can carry (decisions.md, "API keys with limits"),
 * as the form holds them, as `POST /api/keys` takes them, and as the key list
 * describes them.
 */
import type { ApiKey, Permission, StorageBucket } from '@pail/shared';
import type { NewKey } from '../../api/keys';

/** Every permission, in the order the server lists them; `satisfies` keeps it in step with the shared type. */
export const ALL_PERMISSIONS = ['read', 'write', 'delete', 'manage'] as const satisfies readonly Permission[];

export const PERMISSION_HINTS: Record<Permission, string> = {
  read: 'List and download',
  write: 'Upload and replace',
  delete: 'Delete files',
  manage: 'Create and delete buckets, visibility, share links',
  // Not offered by the form (ALL_PERMISSIONS): a key that may shorten GOVERNANCE locks is made on purpose, through the API.
  'bypass-governance': 'Shorten or remove GOVERNANCE object locks',
};

export type ExpiryKind = 'never' | 'days' | 'date';

export interface KeyLimits {
  /** Bucket ids; none chosen means every bucket, also future ones. */
  buckets: number[];
  permissions: Permission[];
  expiry: ExpiryKind;
  /** As typed: a whole number of days. */
  days: string;
  /** An `<input type="date">` value; the key works through the end of that day, local time. */
  date: string;
}

export const NO_LIMITS: KeyLimits = { buckets: [], permissions: [...ALL_PERMISSIONS], expiry: 'never', days: '30', date: '' };

const DAY_SECONDS = 24 * 3600;

/** The first moment after the chosen day ends, in local time: "until 1 May" includes 1 May. */
function endOfLocalDay(date: string): Date | null {
  const [year, month, day] = date.split('-').map(Number);
  if (!year || !month || !day) return null;
  return new Date(year, month - 1, day + 1);
}

/** What is wrong with the limits as chosen, field by field; empty when they can be sent. */
export function limitProblems(limits: KeyLimits, now = Date.now()): { permissions?: string; expiry?: string } {
  const problems: { permissions?: string; expiry?: string } = {};
  if (limits.permissions.length === 0) problems.permissions = 'Pick at least one permission.';
  if (limits.expiry === 'days') {
    const days = Number(limits.days);
    if (!Number.isInteger(days) || days < 1) problems.expiry = 'Enter a whole number of days, at least 1.';
  }
  if (limits.expiry === 'date') {
    const end = endOfLocalDay(limits.date);
    if (!end) problems.expiry = 'Pick a date.';
    else if (end.getTime() <= now) problems.expiry = 'Pick today or a later date.';
  }
  return problems;
}

/** The request body: limits the user did not narrow are left out, so the key is as unlimited as before. */
export function newKeyBody(name: string, limits: KeyLimits): NewKey {
  const body: NewKey = { name };
  if (limits.buckets.length > 0) body.buckets = [...limits.buckets].sort((a, b) => a - b);
  if (limits.permissions.length < ALL_PERMISSIONS.length) body.permissions = ALL_PERMISSIONS.filter((p) => limits.permissions.includes(p));
  if (limits.expiry === 'days') body.expires_in = Number(limits.days) * DAY_SECONDS;
  if (limits.expiry === 'date') {
    const end = endOfLocalDay(limits.date);
    if (end) body.expires_at = end.toISOString();
  }
  return body;
}

/** "All buckets", or the names of the key's buckets (a bucket deleted since shows as its id). */
export function describeBuckets(key: Pick<ApiKey, 'buckets'>, buckets: StorageBucket[] | undefined): string {
  if (key.buckets === null || key.buckets === undefined) return 'All buckets';
  // Until the bucket list has loaded, ids are all there is to show.
  if (!buckets) return key.buckets.map((id) => `#${id}`).join(', ');
  const names = new Map(buckets.map((b) => [b.id, b.name]));
  return key.buckets.map((id) => names.get(id) ?? `#${id} (deleted)`).join(', ');
}

/** "All" for the full set, else the permissions in the server's order. */
export function describePermissions(key: Pick<ApiKey, 'permissions'>): string {
  const granted = key.permissions ?? [...ALL_PERMISSIONS];
  if (ALL_PERMISSIONS.every((p) => granted.includes(p))) return 'All: read, write, delete, manage';
  return ALL_PERMISSIONS.filter((p) => granted.includes(p)).join(', ');
}

export function isExpired(key: Pick<ApiKey, 'expires_at'>, now = Date.now()): boolean {
  return key.expires_at !== null && key.expires_at !== undefined && new Date(key.expires_at).getTime() <= now;
}
