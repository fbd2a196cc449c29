/**
 * The background deliverer (issue 39): takes an endpoint with pending
 * deliveries (one instance at a time, by a lease on its row), sends them one
 * message at a time in their order, and records each attempt. A message
 * carries the deliveries already pending when it is formed, up to
 * MESSAGE_RECORDS (one alone when one is pending: none waits for others), and
 * is fixed from its first attempt on (formMessages). A failure holds the
 * endpoint's queue (order per object is kept) and backs off exponentially;
 * after `retryForMs` (3 days) of failures the endpoint is disabled with a
 * reason its owner sees. The outbox is read a small page at a time, so a
 * backlog of any size costs no memory; nothing here is on a request's path.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialect } from '../db/migrations.js';
import {
  claimEndpoint,
  dropAllLeases,
  formMessages,
  holdLease,
  messageRows,
  pendingPage,
  pruneDelivered,
  recordOutcomes,
  renewLease,
  type MessageAttempt,
  type DeliveryRow,
  type WebhookRow,
} from '../db/repositories/webhook-outbox.js';
import type { Db } from '../db/schema.js';
import { eventRecord, messageBody } from './webhook-payload.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import { resolveWebhookUrl, type ResolvedUrl } from './webhook-urls.js';

/** Pending deliveries read at once: a page is sent as one or a few messages, and recorded in one transaction. */
const PAGE = 1000;
/** The most records one message carries, and the most bytes of them (receivers often take bodies up to 1 MiB). */
export const MESSAGE_RECORDS = 100;
const MESSAGE_BYTES = 256 * 1024;
/** The least time between two looks for work when woken (run()). */
const WAKE_GAP_MS = 25;
const MAX_BACKOFF_MS = 60 * 60 * 1000;

export interface SendResult {
  status: number | null;
  excerpt: string | null;
  error: string | null;
}

export type Send = (input: { target: ResolvedUrl; messageId: string; body: string; secrets: string[]; timeoutMs: number }) => Promise<SendResult>;

export interface DelivererOptions {
  db: Db;
  dialect: Dialect;
  send: Send;
  allowPrivate: boolean;
  timeoutMs: number;
  retryBaseMs: number;
  retryForMs: number;
  pollMs: number;
  region: string;
  /** Endpoints this instance delivers to at once (each one delivery at a time). */
  concurrency: number;
  /** How secrets are stored (sealed). */
  secrets: WebhookSecrets;
  onError: (error: unknown, what: string) => void;
}

export class WebhookDeliverer {
  private readonly instance = `deliverer-${randomUUID()}`;
  private stopped = true;
  private running: Promise<void> | null = null;
  private readonly active = new Set<Promise<void>>();
  private wakeUp: AbortController | null = null;

  constructor(private readonly options: DelivererOptions) {}

  /** A lease outlasts an attempt (sendWebhook may try twice, each within timeoutMs), renewed before one it might not outlast. */
  private get leaseMs(): number {
    return this.options.timeoutMs * 3 + 1_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.run();
  }

  /** Look again now (an event was written); cheap, may be called on every commit. */
  wake(): void {
    this.wakeUp?.abort();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
    await Promise.all([...this.active]);
  }

  private async run(): Promise<void> {
    const { db, dialect } = this.options;
    // SQLite has one process: a lease a killed one held is void.
    if (dialect === 'sqlite') await dropAllLeases(db).catch((error: unknown) => this.options.onError(error, 'dropping webhook leases failed'));
    while (!this.stopped) {
      let claimed: WebhookRow | null = null;
      // Each claim holds the lease under a name of its own: a drain that outlived its lease and the one that took the
      // endpoint next, in this very instance, never both pass as its holder.
      const owner = `${this.instance}:${randomUUID()}`;
      if (this.active.size < this.options.concurrency) {
        const now = Date.now();
        claimed = await claimEndpoint(db, dialect, owner, iso(now), iso(now + this.leaseMs)).catch((error: unknown) => {
          this.options.onError(error, 'claiming a webhook endpoint failed');
          return null;
        });
      }
      if (claimed) {
        const draining: Promise<void> = this.drain(claimed, owner)
          .catch((error: unknown) => this.options.onError(error, `delivering to webhook ${claimed.id} failed`))
          .finally(() => {
            this.active.delete(draining);
            this.wake();
          });
        this.active.add(draining);
        continue;
      }
      const lookedAt = Date.now();
      this.wakeUp = new AbortController();
      await sleep(this.options.pollMs, undefined, { signal: this.wakeUp.signal }).catch(() => {});
      this.wakeUp = null;
      // A new event waits for the next look (pollMs when idle; commits do not wake the deliverer, since at thousands a
      // second a look per commit cost more than the commits). A resend, an endpoint enabled again or a drain that
      // ended wakes it; woken sooner than WAKE_GAP_MS after a look, it waits out the rest, so one look serves them all.
      const early = WAKE_GAP_MS - (Date.now() - lookedAt);
      if (early > 0 && !this.stopped) await sleep(early);
    }
  }

  /**
   * Delivers the endpoint's queue in order until it is empty, an attempt fails, or this instance stops. The messages
   * delivered from a page are recorded together before the next page is read; a failure is recorded at once (with
   * them). A crash before they are recorded sends them again, with the same webhook-id: at least once.
   */
  private async drain(claimed: WebhookRow, owner: string): Promise<void> {
    const { db } = this.options;
    let webhook = claimed;
    // Once a message of this drain got through, a failure starts the endpoint's failing time afresh (its row keeps the
    // old one until the page is recorded): an endpoint that takes most messages is never disabled as if it took none.
    let gotThrough = false;
    const delivered: MessageAttempt[] = [];
    const recordDelivered = () =>
      recordOutcomes(db, claimed.id, delivered.splice(0), {
        nextAttemptAt: null,
        failingSince: null,
        disabledReason: null,
        changed: webhook.failing_since !== null || webhook.next_attempt_at !== null,
      });
    try {
      for (;;) {
        const page = await pendingPage(db, claimed.id, PAGE);
        if (page.length === 0) return;
        for (const message of await this.messagesOf(page)) {
          if (this.stopped) return;
          // Read again before each message, with the lease renewed for all of its attempt (one write per message, of up
          // to MESSAGE_RECORDS events): the owner may have disabled it, changed its url or rotated its secret.
          const current = await renewLease(db, claimed.id, owner, iso(Date.now() + this.leaseMs));
          if (!current) return;
          webhook = current;
          const outcome = await this.attempt(gotThrough ? { ...webhook, failing_since: null } : webhook, message);
          if (outcome.delivered) {
            gotThrough = true;
            delivered.push(outcome.attempt);
            continue;
          }
          await recordOutcomes(db, claimed.id, [...delivered.splice(0), outcome.attempt], outcome.endpoint);
          return;
        }
        await recordDelivered();
        // A page that emptied the queue but for what came meanwhile: the next look comes after the least gap between
        // looks, as when woken (run()), so a steady stream of events goes in messages of many, not one page each.
        if (page.length < PAGE && !this.stopped) await sleep(WAKE_GAP_MS);
      }
    } finally {
      await recordDelivered().catch((error: unknown) => this.options.onError(error, `recording deliveries to webhook ${claimed.id} failed`));
      await holdLease(db, claimed.id, owner, null).catch(() => {});
    }
  }

  /**
   * The page in messages, in order: a delivery already in one (a retry, a resend, or one sent before a crash) goes with
   * that message's rows, as it went the first time; the others are formed into runs of at most MESSAGE_RECORDS and
   * MESSAGE_BYTES, written as such before their first attempt.
   */
  private async messagesOf(page: DeliveryRow[]): Promise<Message[]> {
    const { db, region } = this.options;
    const messages: Message[] = [];
    const formed: DeliveryRow[][] = [];
    const taken = new Set<number>();
    for (let i = 0; i < page.length; i++) {
      const head = page[i]!;
      if (taken.has(head.id)) continue;
      if (head.message_last_id !== null) {
        const rows = await messageRows(db, head);
        for (const row of rows) taken.add(row.id);
        messages.push({ rows, records: rows.map((row) => eventRecord(row, region)) });
        continue;
      }
      const message: Message = { rows: [head], records: [eventRecord(head, region)] };
      let bytes = Buffer.byteLength(message.records[0]!);
      for (let j = i + 1; j < page.length && message.rows.length < MESSAGE_RECORDS; j++) {
        const row = page[j]!;
        if (row.message_last_id !== null || taken.has(row.id)) break;
        const record = eventRecord(row, region);
        const size = Buffer.byteLength(record);
        if (bytes + size + 1 > MESSAGE_BYTES) break;
        bytes += size + 1;
        message.rows.push(row);
        message.records.push(record);
        taken.add(row.id);
      }
      formed.push(message.rows);
      messages.push(message);
    }
    await formMessages(db, formed);
    return messages;
  }

  /** One attempt of a message, and what to record of it. */
  private async attempt(webhook: WebhookRow, message: Message): Promise<{ delivered: boolean; attempt: MessageAttempt; endpoint: EndpointChange }> {
    const { options } = this;
    const [head] = message.rows as [DeliveryRow, ...DeliveryRow[]];
    const now = Date.now();
    let result: SendResult;
    try {
      const target = await resolveWebhookUrl(webhook.url, options.allowPrivate);
      result = await options.send({
        target,
        // Every row of a message took its first row's id when it was formed.
        messageId: head.message_id,
        body: messageBody(message.records),
        secrets: secretsOf(webhook, now, options.secrets),
        timeoutMs: options.timeoutMs,
      });
    } catch (error) {
      result = { status: null, excerpt: null, error: error instanceof Error ? error.message : String(error) };
    }
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const at = iso(Date.now());
    const attempt: MessageAttempt = {
      deliveryIds: message.rows.map((row) => row.id),
      outcome: delivered ? 'delivered' : 'failed',
      response_code: result.status,
      response_excerpt: result.excerpt,
      error: delivered ? null : (result.error ?? `answered ${result.status}`),
      at,
    };
    const failingSince = delivered ? null : (webhook.failing_since ?? iso(now));
    const failedFor = failingSince === null ? 0 : Date.now() - Date.parse(failingSince);
    const giveUp = !delivered && failedFor >= options.retryForMs;
    const backoff = Math.min(options.retryBaseMs * 2 ** Math.min(head.attempts, 30), MAX_BACKOFF_MS);
    return {
      delivered,
      attempt,
      endpoint: {
        nextAttemptAt: delivered ? null : iso(Date.now() + backoff),
        failingSince,
        changed: !delivered || webhook.failing_since !== null || webhook.next_attempt_at !== null,
        disabledReason: giveUp
          ? `Disabled at ${at}: deliveries failed since ${failingSince} (last: ${result.error ?? `HTTP ${result.status}`}); fix the endpoint and enable it again`
          : null,
      },
    };
  }
}

/** Deliveries sent together: their rows in order, and each one's record as JSON. */
interface Message {
  rows: DeliveryRow[];
  records: string[];
}

type EndpointChange = Parameters<typeof recordOutcomes>[3];

/**
 * The secrets that sign now, opened (webhook-secrets.ts): the current one, and a rotated-out one during its
 * overlap. One that does not open (the server secret changed) fails the attempt, with what to do.
 */
export function secretsOf(
  webhook: Pick<WebhookRow, 'bucket_id' | 'secret' | 'previous_secret' | 'previous_secret_until'>,
  now: number,
  secrets: WebhookSecrets,
): string[] {
  const previous = webhook.previous_secret !== null && webhook.previous_secret_until !== null && Date.parse(webhook.previous_secret_until) > now;
  return (previous ? [webhook.secret, webhook.previous_secret!] : [webhook.secret]).map((stored) => {
    const secret = secrets.opened(webhook.bucket_id, stored);
    if (secret === null) throw new Error("The webhook's secret cannot be read with this server's secret (SESSION_SECRET changed?): rotate it");
    return secret;
  });
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Removes delivered events older than `keepDays` (pending and failing ones stay); the garbage collection's schedule runs it. */
export const pruneDeliveredEvents = (db: Db, keepDays: number): Promise<number> => pruneDelivered(db, iso(Date.now() - keepDays * 86_400_000));
