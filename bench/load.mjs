#!/usr/bin/env node
/**
 * One load run with autocannon, as its own process so that run.mjs can pin it
 * to the load core (`taskset -c 1 node bench/load.mjs '<json>'`). Prints one
 * JSON line with the figures run.mjs keeps.
 *
 * Spec (JSON argument):
 *   url, method, headers, connections, duration (s)
 *   bodyBytes    a body of that many bytes (the same bytes every request)
 *   distinct     { prefix }: every request gets its own path
 *                `<url>/<prefix>-<n>` (W4: distinct files)
 *   amount       stop after this many requests instead of `duration` (seeding)
 *   s3Sign       { accessKeyId, secretAccessKey, region }: with `distinct`,
 *                each request signed with Signature V4 in its Authorization
 *                header (s3-header-signer.mjs; W4 through the S3 API)
 */
import autocannon from 'autocannon';
import { createRequire } from 'node:module';
import { headerSigner } from './s3-header-signer.mjs';

const spec = JSON.parse(process.argv[2]);

// autocannon's response parser (http-parser-js) is never told that a HEAD
// response has no body, so it waits for `content-length` bytes that never
// come. Its headers-complete callback returns the parser's "skip body" flag:
// for HEAD runs, the callback autocannon installs is wrapped to return true.
if (spec.method === 'HEAD') {
  const require = createRequire(createRequire(import.meta.url).resolve('autocannon'));
  const { HTTPParser } = require('http-parser-js');
  const slot = HTTPParser.kOnHeadersComplete;
  Object.defineProperty(HTTPParser.prototype, slot, {
    configurable: true,
    get() {
      return this._benchOnHeadersComplete;
    },
    set(callback) {
      this._benchOnHeadersComplete = (...args) => {
        callback.apply(this, args);
        return true;
      };
    },
  });
}
const target = new URL(spec.url);
const body = spec.bodyBytes ? Buffer.alloc(spec.bodyBytes, 'pail-bench-') : undefined;

const options = {
  url: target.origin,
  connections: spec.connections,
  duration: spec.duration,
  pipelining: 1,
  timeout: 30,
  headers: spec.headers ?? {},
};
if (spec.amount) {
  delete options.duration;
  options.amount = spec.amount;
}

const base = { method: spec.method, path: target.pathname + target.search, headers: spec.headers ?? {}, body };
if (spec.distinct) {
  let n = 0;
  const dir = target.pathname.replace(/\/+$/, '');
  const sign = spec.s3Sign ? headerSigner(spec.s3Sign, target.host, body) : null;
  const setupRequest = sign
    ? (request) => {
        const path = `${dir}/${spec.distinct.prefix}-${n++}`;
        return { ...request, path, headers: sign(path, request.headers) };
      }
    : (request) => ({ ...request, path: `${dir}/${spec.distinct.prefix}-${n++}` });
  options.requests = [{ ...base, setupRequest }];
} else {
  options.requests = [base];
}

const result = await autocannon(options);
const codes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
console.log(
  JSON.stringify({
    duration: result.duration,
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    codes,
    errors: result.errors,
    timeouts: result.timeouts,
    rps: result['2xx'] / result.duration,
    allRps: (result['2xx'] + result.non2xx) / result.duration,
    latency: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.mean },
    bytesRead: result.throughput.total,
  }),
);
