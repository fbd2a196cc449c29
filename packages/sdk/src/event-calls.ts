/** What a client hears of changes: a bucket's webhooks (webhooks.ts) and the user's audit log. Pail (client.ts) is built on it. */
import type { PailOptions } from './client-options.js';
import { FileHistoryCalls } from './file-history.js';
import { auditPage, Webhooks, type AuditOptions, type AuditPage } from './webhooks.js';

export class EventCalls extends FileHistoryCalls {
  /** A bucket's webhooks: webhooks.ts. */
  readonly webhooks: Webhooks;

  constructor(options: PailOptions) {
    super(options);
    this.webhooks = new Webhooks(this.transport);
  }

  /** One page of your audit log (who changed keys, buckets, visibility, webhooks, …), newest first. */
  audit(options: AuditOptions = {}): Promise<AuditPage> {
    return auditPage(this.transport, options);
  }
}
