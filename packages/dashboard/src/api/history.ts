/**
 * What the dashboard shows of a file's history and a bucket's trash: tags,
 * versions (list, download, restore, delete for good), the trash listing, and
 * the bucket's versioning and lifecycle rules that make up "the trash"
 * (decisions.md, "Versions and the trash"), and a file's object lock.
 */
import type { FileLock, FileTags, LifecycleRule, RetentionMode, StorageBucket } from '@pail/shared';
import { rulesWithTrash, versioningOf } from '../lib/trash';
import { ApiError, fileApiPath, request } from './http';

/** One version of a file, newest first in a listing (`GET …/files/<file>/versions`). */
export interface FileVersion {
  version_id: string;
  size: number;
  etag: string;
  created_at: string;
  is_latest: boolean;
  is_delete_marker: boolean;
  deleted_by?: string | null;
}

/** A file whose latest version is a delete marker (`GET …/:id/trash`). */
export interface TrashEntry {
  filename: string;
  deleted_at: string;
  deleted_by: string | null;
  size: number;
  restorable_version_id: string | null;
  marker_version_id: string;
}

export async function getTags(bucketId: number, filename: string, signal?: AbortSignal): Promise<Record<string, string>> {
  const res = await request<{ data: FileTags }>(`${fileApiPath(bucketId, filename)}/tags`, { signal });
  return res.data.tags;
}

/** Replaces the file's tags whole; answers them as kept. */
export async function setTags(bucketId: number, filename: string, tags: Record<string, string>): Promise<Record<string, string>> {
  const body: FileTags = { tags };
  const res = await request<{ data: FileTags }>(`${fileApiPath(bucketId, filename)}/tags`, { method: 'PUT', body });
  return res.data.tags;
}

/** Every version of the file, newest first, read a page (1000) at a time. */
export async function listVersions(bucketId: number, filename: string, signal?: AbortSignal): Promise<FileVersion[]> {
  const all: FileVersion[] = [];
  for (let after: string | undefined; ;) {
    const query = after === undefined ? '' : `?after=${encodeURIComponent(after)}`;
    const page = (await request<{ data: FileVersion[] }>(`${fileApiPath(bucketId, filename)}/versions${query}`, { signal })).data;
    all.push(...page);
    if (page.length < VERSIONS_PAGE) return all;
    after = page[page.length - 1]!.version_id;
  }
}

const VERSIONS_PAGE = 1000;

/** A link that downloads one version with the session cookie. */
export const versionUrl = (bucketId: number, filename: string, versionId: string): string =>
  `${fileApiPath(bucketId, filename)}?version_id=${encodeURIComponent(versionId)}`;

/** A copy of that version becomes the current one (a new version); nothing older is lost. */
export async function restoreVersion(bucketId: number, filename: string, versionId: string): Promise<void> {
  await request(`${fileApiPath(bucketId, filename)}/restore`, { method: 'POST', body: { version_id: versionId } });
}

/** Removes one version for good. */
export async function deleteVersion(bucketId: number, filename: string, versionId: string): Promise<void> {
  await request(versionUrl(bucketId, filename, versionId), { method: 'DELETE' });
}

/**
 * Brings a deleted file back: a copy of the newest version before its delete
 * becomes current. The trash names that version; when it does not (a file
 * written before versioning was on, whose version is the `null` one), the
 * file's versions do.
 */
export async function restoreFromTrash(bucketId: number, entry: TrashEntry): Promise<void> {
  const versionId = entry.restorable_version_id ?? (await listVersions(bucketId, entry.filename)).find((v) => !v.is_delete_marker)?.version_id;
  if (versionId === undefined) throw new Error(`Nothing of ${entry.filename} is left to restore: only its delete markers are kept`);
  await restoreVersion(bucketId, entry.filename, versionId);
}

/** Every version of the file, delete markers too, for good: the file leaves the trash. */
export async function deleteForever(bucketId: number, filename: string): Promise<void> {
  for (const version of await listVersions(bucketId, filename)) await deleteVersion(bucketId, filename, version.version_id);
}

export async function listTrash(bucketId: number, signal?: AbortSignal): Promise<TrashEntry[]> {
  const res = await request<{ data: TrashEntry[] }>(`/api/buckets/${bucketId}/trash`, { signal });
  return res.data;
}

export async function setVersioning(bucketId: number, versioning: 'enabled' | 'suspended'): Promise<StorageBucket> {
  const res = await request<{ data: StorageBucket }>(`/api/buckets/${bucketId}`, { method: 'PATCH', body: { versioning } });
  return res.data;
}

/** The bucket's lifecycle rules; none is `[]` (the server's 404 NotFound). */
export async function getLifecycleRules(bucketId: number, signal?: AbortSignal): Promise<LifecycleRule[]> {
  try {
    const res = await request<{ data: { rules: LifecycleRule[] } }>(`/api/buckets/${bucketId}/lifecycle`, { signal });
    return res.data.rules;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && error.code === 'NotFound') return [];
    throw error;
  }
}

/** Saves the rules whole; none removes the configuration. */
export async function saveLifecycleRules(bucketId: number, rules: LifecycleRule[]): Promise<void> {
  if (rules.length === 0) await request(`/api/buckets/${bucketId}/lifecycle`, { method: 'DELETE' });
  else await request(`/api/buckets/${bucketId}/lifecycle`, { method: 'PUT', body: { rules } });
}

/**
 * Turns the trash on for `days` (versioning enabled, the trash's rule set) or
 * off (null: the rule removed, versioning suspended); the bucket's other
 * lifecycle rules stay. Answers the bucket as it now is.
 */
export async function saveTrash(bucket: StorageBucket, days: number | null): Promise<StorageBucket> {
  // Off in a bucket never versioned: there is no trash to turn off.
  if (days === null && versioningOf(bucket) === 'unversioned') return bucket;
  let next = bucket;
  if (days !== null && versioningOf(bucket) !== 'enabled') next = await setVersioning(bucket.id, 'enabled');
  const rules = await getLifecycleRules(bucket.id);
  const wanted = rulesWithTrash(rules, days);
  if (JSON.stringify(wanted) !== JSON.stringify(rules)) await saveLifecycleRules(bucket.id, wanted);
  if (days === null && versioningOf(bucket) === 'enabled') next = await setVersioning(bucket.id, 'suspended');
  return next;
}

/** Where a file's lock is set: beside its details, as `PUT …/files/<file>` is an upload (api/file-details.ts). */
const lockPath = (bucketId: number, what: 'retention' | 'legal-hold', filename: string): string =>
  `/api/buckets/${bucketId}/${what}/${encodeURIComponent(filename)}`;

/** Sets or extends the current version's retention; a COMPLIANCE date only ever moves later (the server says so otherwise). */
export async function setRetention(bucketId: number, filename: string, mode: RetentionMode, retainUntil: string): Promise<FileLock> {
  const res = await request<{ data: FileLock }>(lockPath(bucketId, 'retention', filename), { method: 'PUT', body: { mode, retain_until: retainUntil } });
  return res.data;
}

export async function setLegalHold(bucketId: number, filename: string, on: boolean): Promise<FileLock> {
  const res = await request<{ data: FileLock }>(lockPath(bucketId, 'legal-hold', filename), { method: 'PUT', body: { legal_hold: on } });
  return res.data;
}
