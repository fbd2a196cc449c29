import type { ListBucketsResponse, ListFilesResponse, RetentionMode, StorageBucket } from '@pail/shared';
import type { SortColumn, SortOrder } from '../lib/browse-view';
import { fileApiPath, filePathWithFolders, request } from './http';

export type Visibility = 'public' | 'private';

export async function listBuckets(signal?: AbortSignal): Promise<StorageBucket[]> {
  const res = await request<ListBucketsResponse>('/api/buckets', { signal });
  return res.data;
}

export async function getBucket(id: number, signal?: AbortSignal): Promise<StorageBucket> {
  const res = await request<{ data: StorageBucket }>(`/api/buckets/${id}`, { signal });
  return res.data;
}

/** Object lock for a new bucket (decisions.md, "Object lock"): on for good, with the retention new files get (null: none). */
export interface NewBucketLock {
  defaultRetention: { mode: RetentionMode; days: number } | null;
}

export async function createBucket(name: string, visibility: Visibility, lock: NewBucketLock | null = null): Promise<StorageBucket> {
  const res = await request<{ data: StorageBucket }>('/api/buckets', {
    method: 'POST',
    body: { name, visibility, ...(lock ? { object_lock: true, default_retention: lock.defaultRetention } : {}) },
  });
  return res.data;
}

export async function deleteBucket(id: number): Promise<void> {
  await request(`/api/buckets/${id}`, { method: 'DELETE' });
}

/** A bucket's limits (null: none); the answer is the bucket as it now is. */
export interface BucketLimits {
  max_file_bytes: number | null;
  allowed_types: string[] | null;
}

export async function updateBucketLimits(id: number, limits: BucketLimits): Promise<StorageBucket> {
  const res = await request<{ data: StorageBucket }>(`/api/buckets/${id}`, { method: 'PATCH', body: limits });
  return res.data;
}

export async function setVisibility(id: number, visibility: Visibility): Promise<void> {
  await request(`/api/buckets/${id}/visibility`, { method: 'PATCH', body: { visibility } });
}

export interface ListFilesParams {
  prefix?: string;
  limit?: number;
  cursor?: string | null;
  /** `/`: list the folders directly under `prefix` apart from its files. */
  delimiter?: '/';
  /** Files whose name after `prefix` contains this, ignoring case; with `delimiter`, in every folder under `prefix`. */
  search?: string;
  sort?: SortColumn;
  order?: SortOrder;
}

export async function listFiles(bucketId: number, params: ListFilesParams, signal?: AbortSignal): Promise<ListFilesResponse> {
  const query = new URLSearchParams();
  if (params.prefix) query.set('prefix', params.prefix);
  if (params.limit) query.set('limit', String(params.limit));
  if (params.cursor) query.set('cursor', params.cursor);
  if (params.delimiter) query.set('delimiter', params.delimiter);
  if (params.search) query.set('search', params.search);
  // Always named: without a sort the server lists in byte order (as S3 does); sort=name is a file manager's order.
  if (params.sort) query.set('sort', params.sort);
  if (params.order === 'desc') query.set('order', 'desc');
  const qs = query.toString();
  const res = await request<ListFilesResponse>(`/api/buckets/${bucketId}/files${qs ? `?${qs}` : ''}`, {
    signal,
  });
  return { ...res, folders: res.folders ?? [], next_cursor: res.next_cursor ?? null };
}

/** Slashes go as `%2F`, which is never ambiguous (on the Developer API a literal `…/delete` ending is the delete alias). */
export async function deleteFile(bucketId: number, filename: string): Promise<void> {
  await request(fileApiPath(bucketId, filename), { method: 'DELETE' });
}

/**
 * Makes a folder that stays while it is empty: a 0-byte object whose name ends
 * in `/` (a folder marker, as S3 consoles make them). `folder` is the whole
 * path with its trailing slash, e.g. `photos/2026/`.
 */
export async function createFolder(bucketId: number, folder: string): Promise<void> {
  await request(filePathWithFolders(bucketId, folder), { method: 'PUT', rawBody: '' });
}
