/** A bucket's webhooks and the audit log (issue 39), through the Client API with the session. */
import type { AuditEntry, CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookDelivery, WebhookWithSecret } from '@pail/shared';
import { request } from './http';

const base = (bucketId: number) => `/api/buckets/${bucketId}/webhooks`;

export async function listWebhooks(bucketId: number, signal?: AbortSignal): Promise<Webhook[]> {
  return (await request<{ data: Webhook[] }>(base(bucketId), { signal })).data;
}

export async function createWebhook(bucketId: number, input: CreateWebhookInput): Promise<WebhookWithSecret> {
  return (await request<{ data: WebhookWithSecret }>(base(bucketId), { method: 'POST', body: input })).data;
}

export async function updateWebhook(bucketId: number, webhookId: number, change: UpdateWebhookInput): Promise<Webhook> {
  return (await request<{ data: Webhook }>(`${base(bucketId)}/${webhookId}`, { method: 'PATCH', body: change })).data;
}

export async function rotateWebhookSecret(bucketId: number, webhookId: number): Promise<WebhookWithSecret> {
  return (await request<{ data: WebhookWithSecret }>(`${base(bucketId)}/${webhookId}/rotate-secret`, { method: 'POST' })).data;
}

export async function deleteWebhook(bucketId: number, webhookId: number): Promise<void> {
  await request(`${base(bucketId)}/${webhookId}`, { method: 'DELETE' });
}

export async function listDeliveries(bucketId: number, webhookId: number, signal?: AbortSignal): Promise<WebhookDelivery[]> {
  return (await request<{ data: WebhookDelivery[] }>(`${base(bucketId)}/${webhookId}/deliveries`, { signal })).data;
}

export async function resendDelivery(bucketId: number, webhookId: number, deliveryId: number): Promise<void> {
  await request(`${base(bucketId)}/${webhookId}/deliveries/${deliveryId}/resend`, { method: 'POST' });
}

export async function auditPage(cursor: string | null, signal?: AbortSignal): Promise<{ data: AuditEntry[]; next_cursor: string | null }> {
  return request(`/api/audit?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { signal });
}
