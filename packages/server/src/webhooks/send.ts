/**
 * One webhook delivery on the wire: a POST to the address the url was
 * checked to (domain/webhook-urls.ts), the connection pinned to it, no
 * redirect followed, a time limit on the whole exchange, and at most 1 KiB of
 * the answer read. Signed as Standard Webhooks are, with the `standardwebhooks`
 * package: one signature per live secret (a rotation's overlap).
 */
import { LRUCache } from 'lru-cache';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { SendResult } from '../domain/webhook-deliverer.js';
import type { ResolvedUrl } from '../domain/webhook-urls.js';

export const EXCERPT_BYTES = 1024;

export interface SendInput {
  target: ResolvedUrl;
  messageId: string;
  body: string;
  /** The secrets to sign with (`whsec_…`), the newest first. */
  secrets: string[];
  timeoutMs: number;
}

/** The three Standard Webhooks headers for `body`, signed with each secret. */
export function signatureHeaders(messageId: string, at: Date, body: string, secrets: string[]): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' '),
  };
}

/**
 * Connections kept open between deliveries, one pool per endpoint and checked
 * address: a busy bucket's events would otherwise each pay a TCP (and TLS)
 * handshake. A pool only ever connects to the address it is named by, so a
 * name that now resolves elsewhere gets a pool of its own (after its check).
 * An idle connection is closed after FREE_SOCKET_MS, under the 5 s most
 * servers keep one (Node unrefs it meanwhile, so it never holds a closing
 * process open); the least recently used pools go when there are too many.
 */
const POOLS_KEPT = 256;
const FREE_SOCKET_MS = 4_000;
const pools = new LRUCache<string, http.Agent>({ max: POOLS_KEPT, dispose: (agent) => agent.destroy() });

function poolFor(url: URL, address: string): http.Agent {
  const key = `${url.protocol}//${url.host}|${address}`;
  let pool = pools.get(key);
  if (!pool) {
    const options = { keepAlive: true, maxFreeSockets: 1, timeout: FREE_SOCKET_MS, scheduling: 'lifo' as const };
    pool = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    pools.set(key, pool);
  }
  return pool;
}

export async function sendWebhook(input: SendInput): Promise<SendResult> {
  const first = await sendOnce(input);
  // A kept connection the endpoint closed just as it was reused: once more, on a fresh one (Node's advice for keep-alive).
  return first.retry ? (await sendOnce(input)).result : first.result;
}

function sendOnce(input: SendInput): Promise<{ result: SendResult; retry: boolean }> {
  const { url, address, family } = input.target;
  // The name resolves to the address already checked, whatever DNS says now.
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolveOnce) => {
    const resolve = (result: SendResult) => resolveOnce({ result, retry: false });
    let settled = false;
    const done = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        agent: poolFor(url, address),
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(input.body),
          'user-agent': 'Pail-Webhooks/1',
          ...signatureHeaders(input.messageId, new Date(), input.body, input.secrets),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let length = 0;
        const finish = () => {
          // A whole answer leaves the connection for the next delivery; one cut short at the excerpt closes it.
          if (!response.complete) response.destroy();
          const status = response.statusCode ?? null;
          const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
          done({ status, excerpt: excerpt === '' ? null : excerpt, error: null });
        };
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          length += chunk.length;
          if (length >= EXCERPT_BYTES) finish();
        });
        response.on('end', finish);
        response.on('error', finish);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      done({ status: null, excerpt: null, error: `no answer within ${input.timeoutMs} ms` });
    }, input.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (request.reusedSocket && error.code === 'ECONNRESET' && !settled) {
        settled = true;
        clearTimeout(timer);
        resolveOnce({ result: { status: null, excerpt: null, error: error.message }, retry: true });
        return;
      }
      done({ status: null, excerpt: null, error: error.message.slice(0, 200) });
    });
    request.end(input.body);
  });
}
