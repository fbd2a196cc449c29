import type { ApiKey, CreatedApiKey } from '@pail/shared';
import { request } from './http';

export async function listKeys(signal?: AbortSignal): Promise<ApiKey[]> {
  const res = await request<{ data: ApiKey[] }>('/api/keys', { signal });
  return res.data;
}

export async function createKey(name: string): Promise<CreatedApiKey> {
  const res = await request<{ data: CreatedApiKey }>('/api/keys', { method: 'POST', body: { name } });
  return res.data;
}

export async function revokeKey(id: number): Promise<void> {
  await request(`/api/keys/${id}`, { method: 'DELETE' });
}
