/**
 * Crash safety of S3 multipart uploads, as s3-crash.test.ts checks PutObject:
 * a server SIGKILLed while a part is half sent, or while it completes an
 * upload, comes back with the upload whole (finishable or abortable) or the
 * object whole, never both or neither; counts exact; no blob files beyond
 * live objects and kept parts but the unreferenced ones garbage collection
 * removes.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collectGarbage } from '../src/domain/garbage-collection.js';
import { json, signUp, type TestUser } from './helpers/client.js';
import { spawnServer, type ServerProcess } from './helpers/process.js';
import { freePort, startTestServer } from './helpers/server.js';
import { sdkClient } from './helpers/s3-client.js';

const MiB = 1024 * 1024;
const BUCKET = 'crash';

const dataDirs: string[] = [];
afterEach(async () => {
  await Promise.all(dataDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function s3Client(endpoint: string, user: TestUser): S3Client {
  // The presigned part below carries no body checksum (the presigner would sign the CRC32 of an empty body).
  return sdkClient(endpoint, user, { requestChecksumCalculation: 'WHEN_REQUIRED' });
}

/** A server process on its own DATA_DIR and S3 port, restartable on the same data. */
async function crashableServer() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'pail-s3-mp-crash-'));
  dataDirs.push(dataDir);
  const s3Port = String(await freePort());
  const env = { DATA_DIR: dataDir, S3_API_PORT: s3Port };
  return { dataDir, endpoint: `http://127.0.0.1:${s3Port}`, start: () => spawnServer(env) };
}

async function kill(server: ServerProcess): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}

/** The blobs on disk: each file, and each blob stored as pieces (a `+pieces` directory of links to its parts' files) once. */
async function blobsOnDisk(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => (e.isFile() ? !e.parentPath.endsWith('+pieces') : e.isDirectory() && e.name.endsWith('+pieces')))
    .map((e) => path.join(e.parentPath, e.name));
}

const putPart = async (s3: S3Client, key: string, uploadId: string, partNumber: number, body: Buffer) =>
  (await s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body }))).ETag!;

const completeCommand = (key: string, uploadId: string, etags: string[]) =>
  new CompleteMultipartUploadCommand({
    Bucket: BUCKET,
    Key: key,
    UploadId: uploadId,
    MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
  });

async function bytesOf(s3: S3Client, key: string): Promise<Buffer> {
  const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await object.Body!.transformToByteArray());
}

/** The counts every door reports, which must equal the listing. */
async function countsOf(server: ServerProcess, user: TestUser) {
  const headers = { 'x-api-key': user.apiKey };
  const buckets = (await json(await fetch(`${server.url}/api/v1/buckets`, { headers }))).data as { id: number; name: string }[];
  const id = buckets.find((b) => b.name === BUCKET)!.id;
  const bucket = (await json(await fetch(`${server.url}/api/v1/buckets/${id}`, { headers }))).data as { object_count: number; total_bytes: number };
  const me = (await json(await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${user.token}` } }))).data;
  return { objectCount: bucket.object_count, totalBytes: bucket.total_bytes, storageUsed: me.storage_used_bytes as number };
}

async function listing(s3: S3Client) {
  const objects = ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => [o.Key, o.Size]);
  const uploads = ((await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? []).map((u) => [u.Key, u.UploadId]);
  return { objects, uploads };
}

describe('S3 multipart crash safety', () => {
  it('killed while a part is half sent: after a restart the upload is listed with its whole parts, and finishes byte-equal', async () => {
    const setup = await crashableServer();
    let server = await setup.start();
    try {
      const user = await signUp(server.url);
      let s3 = s3Client(setup.endpoint, user);
      await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
      const uploadId = (await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'half.bin' }))).UploadId!;
      const first = randomBytes(5 * MiB);
      const firstEtag = await putPart(s3, 'half.bin', uploadId, 1, first);
      const url = await getSignedUrl(s3, new UploadPartCommand({ Bucket: BUCKET, Key: 'half.bin', UploadId: uploadId, PartNumber: 2 }), { expiresIn: 600 });
      const cut = http.request(url, { method: 'PUT', headers: { 'content-length': String(5 * MiB) } });
      cut.on('error', () => {});
      cut.write(randomBytes(2 * MiB));
      await new Promise((resolve) => setTimeout(resolve, 500));
      await kill(server);
      cut.destroy();

      server = await setup.start();
      s3 = s3Client(setup.endpoint, user);
      expect(await listing(s3)).toEqual({ objects: [], uploads: [['half.bin', uploadId]] });
      const parts = await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'half.bin', UploadId: uploadId }));
      expect(parts.Parts?.map((part) => [part.PartNumber, part.Size])).toEqual([[1, 5 * MiB]]);
      // Only the kept part's blob: the cut part left nothing.
      expect(await blobsOnDisk(path.join(setup.dataDir, 'blobs'))).toHaveLength(1);
      expect(await countsOf(server, user)).toEqual({ objectCount: 0, totalBytes: 0, storageUsed: 0 });

      const second = randomBytes(MiB);
      const secondEtag = await putPart(s3, 'half.bin', uploadId, 2, second);
      await s3.send(completeCommand('half.bin', uploadId, [firstEtag, secondEtag]));
      expect((await bytesOf(s3, 'half.bin')).equals(Buffer.concat([first, second]))).toBe(true);
      expect(await listing(s3)).toEqual({ objects: [['half.bin', 6 * MiB]], uploads: [] });
      expect(await countsOf(server, user)).toEqual({ objectCount: 1, totalBytes: 6 * MiB, storageUsed: 6 * MiB });
      expect(await blobsOnDisk(path.join(setup.dataDir, 'blobs'))).toHaveLength(1);

      // A second upload cut the same way can be aborted instead: nothing of it remains.
      const other = (await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'other.bin' }))).UploadId!;
      await putPart(s3, 'other.bin', other, 1, randomBytes(5 * MiB));
      const otherUrl = await getSignedUrl(s3, new UploadPartCommand({ Bucket: BUCKET, Key: 'other.bin', UploadId: other, PartNumber: 2 }), {
        expiresIn: 600,
      });
      const otherCut = http.request(otherUrl, { method: 'PUT', headers: { 'content-length': String(5 * MiB) } });
      otherCut.on('error', () => {});
      otherCut.write(randomBytes(2 * MiB));
      await new Promise((resolve) => setTimeout(resolve, 500));
      await kill(server);
      otherCut.destroy();
      server = await setup.start();
      s3 = s3Client(setup.endpoint, user);
      await s3.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'other.bin', UploadId: other }));
      expect(await listing(s3)).toEqual({ objects: [['half.bin', 6 * MiB]], uploads: [] });
      expect(await countsOf(server, user)).toEqual({ objectCount: 1, totalBytes: 6 * MiB, storageUsed: 6 * MiB });
      expect(await blobsOnDisk(path.join(setup.dataDir, 'blobs'))).toHaveLength(1);
    } finally {
      await stop(server);
    }
  });

  it('killed during CompleteMultipartUpload: after a restart the object is whole and the upload gone, or the object absent and the upload finishable', async () => {
    const setup = await crashableServer();
    let server = await setup.start();
    let strays = 0;
    try {
      const user = await signUp(server.url);
      let s3 = s3Client(setup.endpoint, user);
      await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
      const outcomes: string[] = [];
      // Several rounds, each killed a little later, so the kill lands at different points of the completion.
      for (const [round, delay] of [0, 15, 40, 80].entries()) {
        const key = `whole-${round}.bin`;
        const uploadId = (await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }))).UploadId!;
        const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(5 * MiB)];
        const etags = [];
        for (const [index, part] of parts.entries()) etags.push(await putPart(s3, key, uploadId, index + 1, part));
        const before = await listing(s3);
        const completing = s3.send(completeCommand(key, uploadId, etags)).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, delay));
        await kill(server);
        await completing;

        server = await setup.start();
        s3 = s3Client(setup.endpoint, user);
        const after = await listing(s3);
        const present = after.objects.some(([name]) => name === key);
        const stillUploading = after.uploads.some(([, id]) => id === uploadId);
        // Exactly one of the two: the object whole and the upload gone, or the object absent and the upload kept.
        expect({ present, stillUploading }).toEqual(present ? { present: true, stillUploading: false } : { present: false, stillUploading: true });
        outcomes.push(present ? 'completed' : 'kept');
        if (!present) {
          expect(after).toEqual(before);
          await s3.send(completeCommand(key, uploadId, etags));
        }
        expect((await bytesOf(s3, key)).equals(Buffer.concat(parts))).toBe(true);
        const final = await listing(s3);
        expect(final.uploads).toEqual([]);
        const total = (round + 1) * 15 * MiB;
        expect(final.objects).toHaveLength(round + 1);
        expect(await countsOf(server, user)).toEqual({ objectCount: round + 1, totalBytes: total, storageUsed: total });
        // One blob per object, and at most what a kill between a blob operation and its row's commit leaves
        // unreferenced (an assembled blob never committed, part blobs whose rows were removed): garbage collection's, below.
        const blobs = (await blobsOnDisk(path.join(setup.dataDir, 'blobs'))).length;
        expect(blobs).toBeGreaterThanOrEqual(round + 1);
        strays = blobs - (round + 1);
      }
      console.log(`[s3-multipart-crash] killed completions: ${outcomes.join(', ')}; unreferenced blobs left: ${strays}`);
    } finally {
      await stop(server);
    }
    // Every blob beyond the live objects is unreferenced, so garbage collection (grace 0 here) removes exactly those.
    const collector = await startTestServer({ dataDir: setup.dataDir });
    try {
      const report = await collectGarbage(collector.app.pail.storage, 0);
      expect(report.orphansRemoved).toBe(strays);
    } finally {
      await collector.close();
    }
    expect(await blobsOnDisk(path.join(setup.dataDir, 'blobs'))).toHaveLength(4);
  }, 120_000);
});
