#!/usr/bin/env node
/**
 * The bare Node baseline the Pail figures are divided by: `node:http` and
 * `node:fs` streams, no framework, no database, no auth, no durability.
 *
 *   GET  /files/<name>            stat + fs.createReadStream(...).pipe(res)
 *   HEAD /files/<name>            stat, headers only
 *   PUT  /files/<name>            req.pipe(fs.createWriteStream(new file)) -> 201
 *   GET  /list/<dir>?after=<name> readdir, sort, the 1000 names after `after`, JSON
 *
 * Names may contain one `/` (a sub-directory, created on first PUT), so that
 * W4 repetitions write into fresh directories. Usage:
 *   BASELINE_ROOT=/tmp/dir PORT=8090 node bench/baseline-server.mjs
 * It prints `listening <port>` once ready.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const root = path.resolve(process.env.BASELINE_ROOT ?? '.');
const port = Number(process.env.PORT ?? 8090);
const PAGE = 1000;

function safePath(rel) {
  const decoded = decodeURIComponent(rel);
  if (decoded === '' || decoded.split('/').some((part) => part === '' || part === '.' || part === '..')) return null;
  return path.join(root, decoded);
}

function fail(res, status, message) {
  const body = JSON.stringify({ error: message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname.startsWith('/files/')) {
    const file = safePath(url.pathname.slice('/files/'.length));
    if (file === null) return fail(res, 400, 'bad name');
    if (req.method === 'PUT') {
      const write = () => {
        const out = fs.createWriteStream(file);
        out.on('error', () => fail(res, 500, 'write failed'));
        out.on('finish', () => {
          res.writeHead(201, { 'content-type': 'application/json', 'content-length': 2 });
          res.end('{}');
        });
        req.pipe(out);
      };
      const dir = path.dirname(file);
      if (dir === root) return write();
      return fs.mkdir(dir, { recursive: true }, (error) => (error ? fail(res, 500, 'mkdir failed') : write()));
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      return fs.stat(file, (error, stat) => {
        if (error || !stat.isFile()) return fail(res, 404, 'not found');
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': stat.size });
        if (req.method === 'HEAD') return res.end();
        const stream = fs.createReadStream(file);
        stream.on('error', () => res.destroy());
        stream.pipe(res);
      });
    }
    return fail(res, 405, 'method not allowed');
  }
  if (url.pathname.startsWith('/list/') && req.method === 'GET') {
    const dir = safePath(url.pathname.slice('/list/'.length));
    if (dir === null) return fail(res, 400, 'bad name');
    const after = url.searchParams.get('after');
    return fs.readdir(dir, (error, names) => {
      if (error) return fail(res, 404, 'not found');
      names.sort();
      let start = 0;
      if (after) {
        // First name greater than `after` (binary search on the sorted list).
        let lo = 0;
        let hi = names.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (names[mid] <= after) lo = mid + 1;
          else hi = mid;
        }
        start = lo;
      }
      const page = names.slice(start, start + PAGE);
      const body = JSON.stringify({ data: page.map((name) => ({ name })), next: start + PAGE < names.length ? page[page.length - 1] : null });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  }
  if (url.pathname === '/healthz') {
    res.writeHead(200, { 'content-length': 2 });
    return res.end('ok');
  }
  return fail(res, 404, 'no route');
});

server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
