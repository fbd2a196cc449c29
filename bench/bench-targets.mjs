/**
 * Setting the benchmark's servers up (run.mjs, compare.mjs): users, keys,
 * buckets and files, all over the HTTP API, and the baseline's files.
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import fs from 'node:fs';
import path from 'node:path';
import { makeBucket, makeUser, makeVersionedBucket, putFile, seedFiles, walkListing } from './lib.mjs';

export const FILE_4K = Buffer.alloc(4096, 'pail 4 KiB file ');
export const FILE_NAME = 'f4k.bin';

/**
 * Pail with raised limits: public + private bucket with the 4 KiB file, a
 * 10,000-file bucket (withLists), an N-file bucket (withBig; compare.mjs
 * leaves it out).
 */
export async function setupPail(server, cfg, log, { withLists = true, withBig = withLists } = {}) {
  const user = await makeUser(server.base, `bench-${server.label}@example.com`);
  const pub = await makeBucket(server.base, user.key, 'bench-public', 'public');
  const priv = await makeBucket(server.base, user.key, 'bench-private', 'private');
  await putFile(server.base, user.key, pub, FILE_NAME, FILE_4K);
  await putFile(server.base, user.key, priv, FILE_NAME, FILE_4K);
  // The same file in a versioned bucket, written three times (two noncurrent versions beside it): W2/W3/W4 "versioned".
  const versioned = await makeVersionedBucket(server.base, user.key, 'bench-versioned');
  if (versioned !== null) for (let i = 0; i < 3; i++) await putFile(server.base, user.key, versioned, FILE_NAME, FILE_4K);
  const target = {
    server,
    key: user.key,
    pub,
    priv,
    versioned,
    w4Buckets: new Map(),
    webhooks: server.label === 'pail', // its receivers are local: run.mjs sets WEBHOOK_ALLOW_PRIVATE
    signedUrl: await signedUrlOf(server.base, user.key, priv),
    s3Url: server.s3Base ? await presignedGetOf(server.s3Base, user, 'bench-private') : null,
    // The key's S3 credential, for W4 through the S3 API (each PUT signed in its Authorization header).
    s3Credential: server.s3Base ? { accessKeyId: user.accessKeyId, secretAccessKey: user.secretAccessKey, region: 'us-east-1' } : null,
  };
  if (!withLists) return target;

  let started = Date.now();
  target.list = await makeBucket(server.base, user.key, 'bench-list10k', 'private');
  await seedFiles(server.base, user.key, target.list, { prefix: 'l', count: cfg.listFiles });
  log(`  seeded ${cfg.listFiles} files for W7 in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (!withBig) return target;

  started = Date.now();
  target.big = await makeBucket(server.base, user.key, 'bench-big', 'private');
  const seeded = await seedFiles(server.base, user.key, target.big, { prefix: 's', count: cfg.bigFiles });
  await putFile(server.base, user.key, target.big, FILE_NAME, FILE_4K);
  log(`  seeded ${cfg.bigFiles} files into the big bucket in ${((Date.now() - started) / 1000).toFixed(1)} s (${Math.round(seeded.rps)} PUT/s)`);

  // The late page of W7: the cursor of the last full page of the seeded files.
  const walk = await walkListing(server.base, user.key, target.big);
  const lastFull = Math.floor(cfg.bigFiles / 1000) - 1;
  target.bigCount = walk.count;
  target.lateCursor = walk.cursors[lastFull - 1] ?? walk.cursors[walk.cursors.length - 1];
  target.latePage = lastFull + 1;
  return target;
}

/** A GET url for the private 4 KiB file, signed for the longest expiry (W2 "signed"); null on a build without signed urls. */
async function signedUrlOf(base, key, bucket) {
  const response = await fetch(`${base}/api/v1/buckets/${bucket}/files/${FILE_NAME}/signed-url`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'GET', expires_in: 604800 }),
  });
  if (response.status !== 201) return null;
  return (await response.json()).data.url;
}

/** The 4 KiB file through the S3 API: a presigned GetObject (7 days) of the private bucket, so autocannon can repeat it. */
export async function presignedGetOf(s3Base, user, bucketName) {
  const client = new S3Client({
    endpoint: s3Base,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: user.accessKeyId, secretAccessKey: user.secretAccessKey },
  });
  return getSignedUrl(client, new GetObjectCommand({ Bucket: bucketName, Key: FILE_NAME }), { expiresIn: 604800 });
}

/** The baseline's files: the 4 KiB file and a 10,000-file directory, written directly. */
export function setupBaseline(server, cfg) {
  fs.writeFileSync(path.join(server.dataDir, FILE_NAME), FILE_4K);
  const dir = path.join(server.dataDir, 'list10k');
  fs.mkdirSync(dir);
  for (let n = 0; n < cfg.listFiles; n++) fs.writeFileSync(path.join(dir, `l-${n}`), 'x'.repeat(16));
  return { server };
}
