/**
 * A real webhook receiver for tests: a local HTTP server that keeps every
 * request (headers and body) and answers what the test says, and a waiter
 * that polls until it has what the test expects (no timed assertion: a
 * generous limit only turns a hang into a failure).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: Record<string, string>;
  body: string;
  /** What the receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The answer to the next request (given the requests received before it). */
  answer: (request: Received, index: number) => { status: number; headers?: Record<string, string>; body?: string };
  /** TCP connections accepted so far. */
  connections: number;
  /** How long each answer waits (a slow receiver). */
  delayMs: number;
  /** Holds every answer (to requests received before and after) until the returned function is called. */
  hold(): () => void;
  /** The first request of each webhook-id that was answered 2xx, in the order they arrived. */
  delivered(): Received[];
  /** Polls until `done` holds of the requests received. */
  waitFor(done: (received: Received[]) => boolean, what: string, limitMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let held: Promise<void> = Promise.resolve();
  const receiver: Receiver = {
    url: '',
    received,
    answer: () => ({ status: 204 }),
    connections: 0,
    delayMs: 0,
    hold() {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return release;
    },
    delivered() {
      const seen = new Set<string>();
      return received.filter((r) => r.status >= 200 && r.status < 300 && !seen.has(r.headers['webhook-id']!) && seen.add(r.headers['webhook-id']!));
    },
    async waitFor(done, what, limitMs = 30_000) {
      const until = Date.now() + limitMs;
      while (!done(received)) {
        if (Date.now() > until) throw new Error(`the receiver never had ${what}; it has ${received.length} requests`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: Received = { headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), status: 0 };
      const answer = receiver.answer(entry, received.length);
      entry.status = answer.status;
      received.push(entry);
      const gate = held;
      setTimeout(() => {
        void gate.then(() => {
          response.writeHead(answer.status, answer.headers ?? {});
          response.end(answer.body ?? '');
        });
      }, receiver.delayMs);
    });
  });
  server.on('connection', () => receiver.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

export interface S3Record {
  eventName: string;
  s3: { configurationId: string; bucket: { name: string }; object?: { key: string; size?: number; eTag?: string; versionId?: string; sequencer: string } };
  pail: { event: string; sequencer: string };
}

/** The S3 records a message carries, in its order (a message may carry several events). */
export const recordsOf = (received: Pick<Received, 'body'>): S3Record[] => (JSON.parse(received.body) as { Records: S3Record[] }).Records;

/** The first S3 record of a message. */
export const recordOf = (received: Pick<Received, 'body'>): S3Record => recordsOf(received)[0]!;

/** Verifies a delivery's signature as a receiver would, with the standardwebhooks package; throws when it does not verify. */
export const verify = (secret: string, received: Received) => new Webhook(secret).verify(received.body, received.headers);
