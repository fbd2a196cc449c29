import type { ApiKey, CreatedApiKey, Permission } from '@pail/shared';
import { request } from './http';

/** What `POST /api/keys` takes; a limit left out means "no limit" (every bucket, all permissions, never expires). */
export interface NewKey {
  name: string;
  buckets?: number[];
  permissions?: Permission[];
  expires_at?: string;
  expires_in?: number;
}

export async function listKeys(signal?: AbortSignal): Promise<ApiKey[]> {
  const res = await request<{ data: ApiKey[] }>('/api/keys', { signal });
  return res.data;
}

export async function createKey(key: NewKey): Promise<CreatedApiKey> {
  const res = await request<{ data: CreatedApiKey }>('/api/keys', { method: 'POST', body: key });
  return res.data;
}

export async function revokeKey(id: number): Promise<void> {
  await request(`/api/keys/${id}`, { method: 'DELETE' });
}
