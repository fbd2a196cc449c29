#!/usr/bin/env node
/**
 * `node bench/webhook-deliverer.mjs [--events N] [--chunk C] [--gap MS] [--main FILE]` (issue 39): the deliverer's
 * own cost, without uploads. A bucket's webhook points at a receiver that answers 204 at once; N events (default
 * 20,000) are written straight into its outbox, C at a time (default 100) every MS milliseconds (default 25: a steady
 * stream of about 4,000 a second, as W4 makes), and the server's CPU time until none is pending is divided by N.
 * --chunk N --gap 0: one backlog of N. --main: another build's packages/server/dist/main.js.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { RAISED_LIMITS, commandLine, makeUser, sleep, startServer } from './lib.mjs';
import { hookedBucket } from './webhook-receivers.mjs';

const { option } = commandLine();
const events = Number(option('--events') ?? 20_000);
const chunk = Number(option('--chunk') ?? 100);
const gap = Number(option('--gap') ?? 25);
const main = option('--main');
const cpuUs = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};

const server = await startServer('pail', {
  label: 'deliverer',
  ...(main ? { main: path.resolve(main) } : {}),
  env: { ...RAISED_LIMITS, WEBHOOK_ALLOW_PRIVATE: 'true' },
});
try {
  const user = await makeUser(server.base, 'deliverer@example.com');
  await hookedBucket({ server, key: user.key, w4Buckets: new Map() }, 1, 'live');
  const db = new Database(path.join(server.dataDir, 'pail.db'));
  db.pragma('busy_timeout = 10000');
  const webhookId = db.prepare('select id from webhooks').pluck().get();
  const insert = db.prepare(
    `insert into webhook_deliveries (webhook_id, message_id, event, event_name, bucket_name, object_key, size, etag, principal, event_time, state) values (?, ?, 'object.created', 's3:ObjectCreated:Put', 'bench-w4live-r1', ?, 4096, 'd41d8cd98f00b204e9800998ecf8427e', 'user:1', ?, 'pending')`,
  );
  const pending = db.prepare(`select count(*) from webhook_deliveries where state = 'pending'`).pluck();
  const startCpu = cpuUs(server.pid);
  const started = Date.now();
  for (let i = 0; i < events; i += chunk) {
    db.transaction(() => {
      for (let j = i; j < Math.min(events, i + chunk); j++) insert.run(webhookId, `msg_bench_${j}`, `p${j}`, new Date().toISOString());
    })();
    if (gap > 0) await sleep(gap);
  }
  while (pending.get() > 0) await sleep(20);
  const us = (cpuUs(server.pid) - startCpu) / events;
  console.log(`${events} events, ${chunk} every ${gap} ms: all delivered after ${Date.now() - started} ms; server CPU ${Math.round(us)} µs per event`);
  db.close();
} finally {
  await server.stop();
}
