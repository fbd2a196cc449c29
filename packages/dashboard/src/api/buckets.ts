import type { ListBucketsResponse, ListFilesResponse, StorageBucket } from '@pail/shared';
import { fileApiPath, request } from './http';

export type Visibility = 'public' | 'private';

export async function listBuckets(signal?: AbortSignal): Promise<StorageBucket[]> {
  const res = await request<ListBucketsResponse>('/api/buckets', { signal });
  return res.data;
}

export async function getBucket(id: number, signal?: AbortSignal): Promise<StorageBucket> {
  const res = await request<{ data: StorageBucket }>(`/api/buckets/${id}`, { signal });
  return res.data;
}

export async function createBucket(name: string, visibility: Visibility): Promise<StorageBucket> {
  const res = await request<{ data: StorageBucket }>('/api/buckets', {
    method: 'POST',
    body: { name, visibility },
  });
  return res.data;
}

export async function deleteBucket(id: number): Promise<void> {
  await request(`/api/buckets/${id}`, { method: 'DELETE' });
}

export async function setVisibility(id: number, visibility: Visibility): Promise<void> {
  await request(`/api/buckets/${id}/visibility`, { method: 'PATCH', body: { visibility } });
}

export interface ListFilesParams {
  prefix?: string;
  limit?: number;
  cursor?: string | null;
}

export async function listFiles(bucketId: number, params: ListFilesParams, signal?: AbortSignal): Promise<ListFilesResponse> {
  const query = new URLSearchParams();
  if (params.prefix) query.set('prefix', params.prefix);
  if (params.limit) query.set('limit', String(params.limit));
  if (params.cursor) query.set('cursor', params.cursor);
  const qs = query.toString();
  const res = await request<ListFilesResponse>(`/api/buckets/${bucketId}/files${qs ? `?${qs}` : ''}`, {
    signal,
  });
  return { ...res, next_cursor: res.next_cursor ?? null };
}

export async function deleteFile(bucketId: number, filename: string): Promise<void> {
  await request(fileApiPath(bucketId, filename), { method: 'DELETE' });
}
