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
import net from 'node:net';

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

/**
 * The download reads the socket into one reused 1 MiB buffer (net's `onread`)
 * and parses the response head itself, instead of Node's HTTP client and its
 * 64 KiB reads with a fresh buffer each: on one core, that client, not the
 * server, set the pace of a fast download (measured: the load core at 92–98%
 * while the server's core had room).
 */
function download() {
  return new Promise((resolve, reject) => {
    const hash = spec.md5 ? createHash('md5') : null;
    const url = new URL(spec.url);
    const started = process.hrtime.bigint();
    let head = Buffer.alloc(0);
    let status = null;
    let length = null;
    let bytes = 0;
    const finish = () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      socket.destroy();
      resolve({ status, bytes, seconds, mbps: bytes / seconds / 1e6, md5: hash?.digest('hex') ?? null });
    };
    const body = (chunk) => {
      bytes += chunk.length;
      hash?.update(chunk);
      if (bytes >= length) finish();
    };
    const socket = net.connect({
      host: url.hostname,
      port: Number(url.port || 80),
      onread: {
        buffer: Buffer.allocUnsafe(1024 * 1024),
        callback(n, buffer) {
          if (status !== null) return body(buffer.subarray(0, n));
          head = Buffer.concat([head, buffer.subarray(0, n)]);
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) return;
          const lines = head.subarray(0, end).toString('latin1').split('\r\n');
          status = Number(lines[0].split(' ')[1]);
          const header = (name) =>
            lines
              .find((line) => line.toLowerCase().startsWith(`${name}:`))
              ?.slice(name.length + 1)
              .trim();
          if (header('transfer-encoding')) return reject(new Error('a chunked response: this client counts Content-Length bodies only'));
          length = Number(header('content-length') ?? 0);
          const rest = head.subarray(end + 4);
          if (length === 0) return finish();
          if (rest.length > 0) body(rest);
        },
      },
    });
    socket.on('error', reject);
    socket.on('end', () => {
      if (status === null || bytes < length) reject(new Error(`the connection ended after ${bytes} of ${length ?? '?'} bytes`));
    });
    const headers = Object.entries({ host: url.host, connection: 'close', ...spec.headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\n${headers}\r\n`);
  });
}

const result = spec.mode === 'upload' ? await upload() : await download();
console.log(JSON.stringify(result));
