/**
 * A complete browser-upload example for Pail's S3 API: this small server
 * serves index.html and signs one presigned POST form per upload
 * (GET /sign-upload?name=<file name>&type=<content type>); the page posts the
 * file straight to Pail, so its bytes never pass through this server.
 *
 *   PAIL_S3_ENDPOINT=http://localhost:9000 PAIL_ACCESS_KEY_ID=... \
 *   PAIL_SECRET_ACCESS_KEY=... BUCKET=photos node examples/presigned-post/server.mjs
 *
 * then open http://localhost:8080. At start it gives the bucket a CORS rule
 * letting this page's origin POST to it and read the answer's ETag.
 */
import { PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const bucket = env('BUCKET');
const port = Number(env('PORT', '8080'));
const origin = env('ORIGIN', `http://localhost:${port}`);
const s3 = new S3Client({
  endpoint: env('PAIL_S3_ENDPOINT', 'http://localhost:9000'),
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: env('PAIL_ACCESS_KEY_ID'), secretAccessKey: env('PAIL_SECRET_ACCESS_KEY') },
});

await s3.send(
  new PutBucketCorsCommand({
    Bucket: bucket,
    CORSConfiguration: { CORSRules: [{ AllowedOrigins: [origin], AllowedMethods: ['POST'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 600 }] },
  }),
);

const page = await readFile(new URL('./index.html', import.meta.url));

createServer(async (request, response) => {
  const url = new URL(request.url ?? '/', origin);
  if (url.pathname === '/') return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  if (url.pathname !== '/sign-upload') return response.writeHead(404).end();
  // One form per file: at most 10 MB, under uploads/, with the type the page declares (images only).
  const type = url.searchParams.get('type') ?? '';
  if (!type.startsWith('image/')) return response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"images only"}');
  const { url: action, fields } = await createPresignedPost(s3, {
    Bucket: bucket,
    Key: 'uploads/${filename}',
    Expires: 600,
    Fields: { 'Content-Type': type },
    Conditions: [
      ['content-length-range', 1, 10_000_000],
      ['eq', '$Content-Type', type],
    ],
  });
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: action, fields }));
}).listen(port, () => console.log(`Browser uploads to bucket ${bucket}: open ${origin}`));
