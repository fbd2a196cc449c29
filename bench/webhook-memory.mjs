#!/usr/bin/env node
/**
 * `node bench/webhook-memory.mjs [--events N]` (issue 39): the server's memory
 * with N (default 100,000) undelivered webhook events. A bucket's webhook
 * points at a dead endpoint (a port nothing listens on: every attempt fails
 * at once and backs off from WEBHOOK_RETRY_BASE_MS=10); N pending deliveries
 * are written straight into its outbox (as N uploads' commits would), and the
 * server's RSS is sampled while the deliverer keeps failing and the owner
 * lists the webhook (its pending count) and its deliveries. Memory must stay
 * flat: the deliverer reads the outbox a page (1,000 rows) at a time.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { RAISED_LIMITS, api, commandLine, makeBucket, makeUser, startServer } from './lib.mjs';

const { option } = commandLine();
const events = Number(option('--events') ?? 100_000);
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const server = await startServer('pail', {
  label: 'hookmem',
  env: { ...RAISED_LIMITS, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '10', WEBHOOK_POLL_MS: '50' },
});
try {
  const user = await makeUser(server.base, 'hookmem@example.com');
  const bucket = await makeBucket(server.base, user.key, 'hookmem', 'private');
  const hook = await api(server.base, 'POST', `/api/v1/buckets/${bucket}/webhooks`, {
    key: user.key,
    json: { url: 'http://127.0.0.1:9/dead', events: ['object.created'] },
    expect: [201],
  });
  const idle = rssMiB(server.pid);
  const db = new Database(path.join(server.dataDir, 'pail.db'));
  db.pragma('busy_timeout = 10000');
  const insert = db.prepare(
    `insert into webhook_deliveries (webhook_id, message_id, event, event_name, bucket_name, object_key, size, etag, principal, event_time, state) values (?, ?, 'object.created', 's3:ObjectCreated:Put', 'hookmem', ?, 4096, 'etag', 'bench', ?, 'pending')`,
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    for (let i = 0; i < events; i++) insert.run(hook.data.id, `msg_bench_${i}`, `file-${i}.bin`, now);
  })();
  db.close();
  const samples = [];
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const view = await api(server.base, 'GET', `/api/v1/buckets/${bucket}/webhooks/${hook.data.id}`, { key: user.key, expect: [200] });
    await api(server.base, 'GET', `/api/v1/buckets/${bucket}/webhooks/${hook.data.id}/deliveries`, { key: user.key, expect: [200] });
    samples.push({ rss: rssMiB(server.pid), pending: view.data.pending });
    await sleep(500);
  }
  const rss = samples.map((sample) => sample.rss);
  const attempts = samples.at(-1).pending;
  console.log(`idle RSS before the backlog: ${idle.toFixed(1)} MiB`);
  console.log(`with ${events} undelivered events (${attempts} still pending at the end), 30 s of failing deliveries and listings:`);
  console.log(`  RSS first ${rss[0].toFixed(1)} MiB, last ${rss.at(-1).toFixed(1)} MiB, max ${Math.max(...rss).toFixed(1)} MiB (${samples.length} samples)`);
} finally {
  await server.stop();
}
