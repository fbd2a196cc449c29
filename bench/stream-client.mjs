#!/usr/bin/env node
/**
 * W5/W6 client: streams one large body up or down without holding it in
 * memory, on the load core (run.mjs starts it under `taskset -c 1`).
 *
 *   node bench/stream-client.mjs '<json>'
 *   { mode: 'upload'|'download', url, headers, bytes, md5: boolean }
 *
 * The upload body is generated: one random 1 MiB block, repeated, with the
 * block number written into its first 8 bytes (so a lost, repeated or
 * reordered block changes the MD5). Prints one JSON line:
 *   { status, bytes, seconds, mbps (10^6 bytes/s), md5 }
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';

const spec = JSON.parse(process.argv[2]);
const BLOCK = 1024 * 1024;

function upload() {
  return new Promise((resolve, reject) => {
    const hash = spec.md5 ? createHash('md5') : null;
    const block = randomBytes(BLOCK);
    const url = new URL(spec.url);
    const started = process.hrtime.bigint();
    const req = http.request(
      url,
      { method: 'PUT', headers: { ...spec.headers, 'content-length': String(spec.bytes), 'content-type': 'application/octet-stream' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          resolve({ status: res.statusCode, bytes: sent, seconds, mbps: sent / seconds / 1e6, md5: hash?.digest('hex') ?? null, response: text.slice(0, 500) });
        });
      },
    );
    req.on('error', reject);
    let sent = 0;
    let n = 0;
    const pump = () => {
      while (sent < spec.bytes) {
        const size = Math.min(BLOCK, spec.bytes - sent);
        // A fresh buffer per block: the socket may still hold the previous one.
        const chunk = Buffer.allocUnsafe(size);
        block.copy(chunk, 0, 0, size);
        if (size >= 8) chunk.writeBigUInt64BE(BigInt(n), 0);
        n += 1;
        sent += size;
        hash?.update(chunk);
        if (!req.write(chunk)) return req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

function download() {
  return new Promise((resolve, reject) => {
    const hash = spec.md5 ? createHash('md5') : null;
    const started = process.hrtime.bigint();
    const req = http.get(new URL(spec.url), { headers: spec.headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
        hash?.update(chunk);
      });
      res.on('end', () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        resolve({ status: res.statusCode, bytes, seconds, mbps: bytes / seconds / 1e6, md5: hash?.digest('hex') ?? null });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const result = spec.mode === 'upload' ? await upload() : await download();
console.log(JSON.stringify(result));
