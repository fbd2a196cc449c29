/**
 * A bucket's webhooks (issue 39), as `pail.webhooks.*`: add, list, change
 * (enable/disable), rotate the secret, delete; recent deliveries and resend.
 * The secret is in the answers of `create` and `rotateSecret` only.
 */
import type { AuditEntry, CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookDelivery, WebhookWithSecret } from '@pail/shared';
import type { BucketId, CallOptions } from './call-options.js';
import { bucketSegment } from './request-paths.js';
import type { Transport } from './transport.js';

export type { AuditEntry, CreateWebhookInput, UpdateWebhookInput, Webhook, WebhookDelivery, WebhookWithSecret };

export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `cursor` for the next (older) page; null: the end. */
  nextCursor: string | null;
}

export interface AuditOptions extends CallOptions {
  limit?: number;
  cursor?: string;
}

export class Webhooks {
  constructor(private readonly transport: Transport) {}

  private path(id: BucketId, rest = ''): string {
    return `/${bucketSegment(id)}/webhooks${rest}`;
  }

  /** Adds a webhook; the answer's `secret` (whsec_…) is shown this once. */
  async create(id: BucketId, input: CreateWebhookInput, options: CallOptions = {}): Promise<WebhookWithSecret> {
    return (await this.transport.json<{ data: WebhookWithSecret }>({ method: 'POST', path: this.path(id), json: input, ...options })).data;
  }

  async list(id: BucketId, options: CallOptions = {}): Promise<Webhook[]> {
    return (await this.transport.json<{ data: Webhook[] }>({ method: 'GET', path: this.path(id), ...options })).data;
  }

  async get(id: BucketId, webhookId: number, options: CallOptions = {}): Promise<Webhook> {
    return (await this.transport.json<{ data: Webhook }>({ method: 'GET', path: this.path(id, `/${webhookId}`), ...options })).data;
  }

  /** Changes it; `{ enabled: false }` pauses it, `{ enabled: true }` resumes it (also after the server disabled it). */
  async update(id: BucketId, webhookId: number, change: UpdateWebhookInput, options: CallOptions = {}): Promise<Webhook> {
    return (await this.transport.json<{ data: Webhook }>({ method: 'PATCH', path: this.path(id, `/${webhookId}`), json: change, ...options })).data;
  }

  /** A new secret, shown once; the old one keeps signing beside it for the server's overlap period. */
  async rotateSecret(id: BucketId, webhookId: number, options: CallOptions = {}): Promise<WebhookWithSecret> {
    return (await this.transport.json<{ data: WebhookWithSecret }>({ method: 'POST', path: this.path(id, `/${webhookId}/rotate-secret`), ...options })).data;
  }

  async delete(id: BucketId, webhookId: number, options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'DELETE', path: this.path(id, `/${webhookId}`), ...options });
  }

  /** Its recent deliveries, newest first, each with its attempts. */
  async deliveries(id: BucketId, webhookId: number, options: CallOptions = {}): Promise<WebhookDelivery[]> {
    return (await this.transport.json<{ data: WebhookDelivery[] }>({ method: 'GET', path: this.path(id, `/${webhookId}/deliveries`), ...options })).data;
  }

  /** Sends a delivery again: the same body and webhook-id. */
  async resend(id: BucketId, webhookId: number, deliveryId: number, options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'POST', path: this.path(id, `/${webhookId}/deliveries/${deliveryId}/resend`), ...options });
  }
}

/** One page of the caller's audit log, newest first. */
export async function auditPage(transport: Transport, options: AuditOptions = {}): Promise<AuditPage> {
  const { limit, cursor, signal } = options;
  const body = await transport.json<{ data: AuditEntry[]; next_cursor: string | null }>({
    method: 'GET',
    api: 'audit',
    path: '',
    query: { limit, cursor },
    signal,
  });
  return { entries: body.data, nextCursor: body.next_cursor };
}
