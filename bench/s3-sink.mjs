#!/usr/bin/env node
/**
 * A stand-in S3 endpoint that does no work (`npm run bench:s3 -- --sink`):
 * it reads every body and throws it away, checks no signature, hashes
 * nothing and stores nothing, and answers the few calls a PutObject and a
 * lib-storage Upload make (CreateMultipartUpload, UploadPart,
 * CompleteMultipartUpload, PutObject) as S3 would. Against it, an upload
 * goes as fast as the client itself can send: the ceiling any server could
 * reach with that client on this machine.
 *
 *   node bench/s3-sink.mjs   (prints {"port": N} once listening on 127.0.0.1)
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';

const xml = (root, fields) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${Object.entries(fields)
    .map(([name, value]) => `<${name}>${value}</${name}>`)
    .join('')}</${root}>`;

const server = http.createServer((request, response) => {
  const url = new URL(request.url, 'http://sink');
  const [, bucket = '', ...keyParts] = url.pathname.split('/');
  const key = keyParts.join('/');
  let size = 0;
  request.on('data', (chunk) => (size += chunk.length));
  request.on('end', () => {
    const etag = `"${randomBytes(16).toString('hex')}"`;
    if (request.method === 'POST' && url.searchParams.has('uploads')) {
      const body = xml('InitiateMultipartUploadResult', { Bucket: bucket, Key: key, UploadId: randomBytes(12).toString('hex') });
      response.writeHead(200, { 'content-type': 'application/xml' }).end(body);
    } else if (request.method === 'POST' && url.searchParams.has('uploadId')) {
      const body = xml('CompleteMultipartUploadResult', { Location: `http://sink/${bucket}/${key}`, Bucket: bucket, Key: key, ETag: etag });
      response.writeHead(200, { 'content-type': 'application/xml' }).end(body);
    } else if (request.method === 'PUT') {
      // The part's or object's checksum header, echoed as S3 echoes a verified one.
      const checksums = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-algorithm'),
      );
      response.writeHead(200, { etag, 'x-sink-bytes': String(size), ...checksums }).end();
    } else {
      response.writeHead(501).end();
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
