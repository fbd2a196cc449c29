/**
 * The BlobStore contract against the filesystem store and against the S3 store
 * on an s3rver instance started here (127.0.0.1, ephemeral port). If s3rver
 * cannot start, every S3 test fails: nothing is skipped.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobNotFoundError, BlobTooLargeError } from '../src/blob/blob-store.js';
import { contentHashEngine, contentHashOf, createContentHasher, createWasmContentHasher } from '../src/blob/content-hash.js';
import { FileWrites } from '../src/blob/file-writes.js';
import { FsBlobStore } from '../src/blob/fs-store.js';
import { S3BlobStore, type S3StoreConfig } from '../src/blob/s3-store.js';
import { chunked, collect, describeBlobStoreContract, failingAfter } from './blob-store-contract.js';
import { blake3Hex } from './helpers/blake3.js';

const MiB = 1024 * 1024;

describeBlobStoreContract('FsBlobStore', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-fs-store-'));
  const store = await FsBlobStore.open(dir);
  return {
    store,
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('FsBlobStore with releaseChunks', () => {
  it('stores the exact bytes, then frees every chunk that is a whole buffer and leaves slices alone', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-fs-release-'));
    const store = await FsBlobStore.open(dir);
    try {
      // As Node's HTTP parser delivers a body: each piece in a fresh buffer of its own.
      const whole = Array.from({ length: 40 }, () => {
        const chunk = Buffer.allocUnsafeSlow(64 * 1024);
        randomBytes(chunk.length).copy(chunk);
        return chunk;
      });
      // Slices of one shared buffer, as a multipart parser delivers file data.
      const shared = randomBytes(256 * 1024);
      const slices = [shared.subarray(0, 100_000), shared.subarray(100_000)];
      const chunks = [...whole, ...slices];
      const expected = Buffer.concat(chunks);

      // One chunk per read (a byte stream would join the chunks it has buffered into a new one).
      const result = await store.put('k/released', Readable.from(chunks), { releaseChunks: true });
      expect(result).toEqual({ size: expected.length, contentHash: await blake3Hex(expected) });
      expect((await store.read('k/released')).equals(expected)).toBe(true);
      expect(whole.map((chunk) => chunk.length)).toEqual(whole.map(() => 0));
      expect(slices.map((slice) => slice.length)).toEqual([100_000, 256 * 1024 - 100_000]);
      expect(shared.length).toBe(256 * 1024);

      // Without the option, nothing is touched.
      const kept = [Buffer.allocUnsafeSlow(64 * 1024).fill(7)];
      await store.put('k/kept', Readable.from(kept));
      expect(kept[0]!.length).toBe(64 * 1024);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------
// s3rver (CommonJS, no type declarations: loaded through require).

interface S3rverOptions {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}
interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
const S3rver = createRequire(import.meta.url)('s3rver') as new (options: S3rverOptions) => S3rverInstance;

const BUCKET = 'pail-test';

interface RunningS3rver {
  server: S3rverInstance;
  directory: string;
  endpoint: string;
}

let s3rver: Promise<RunningS3rver> | undefined;

/** Started on first use; a start-up failure rejects every S3 test's setup. */
function startS3rver(): Promise<RunningS3rver> {
  s3rver ??= (async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'pail-s3rver-'));
    const server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory,
      configureBuckets: [{ name: BUCKET }],
    });
    const address = await server.run();
    if (!address || typeof address.port !== 'number' || address.port === 0) {
      throw new Error(`s3rver did not report a port: ${JSON.stringify(address)}`);
    }
    return { server, directory, endpoint: `http://127.0.0.1:${address.port}` };
  })();
  return s3rver;
}

afterAll(async () => {
  if (!s3rver) return;
  const running = await s3rver.catch(() => undefined);
  if (!running) return;
  await running.server.close();
  await rm(running.directory, { recursive: true, force: true });
});

function s3Config(endpoint: string, overrides: Partial<S3StoreConfig> = {}): S3StoreConfig {
  return {
    endpoint,
    bucket: BUCKET,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
    // Every store gets its own key prefix, so tests never see each other's blobs.
    prefix: `t-${randomUUID()}`,
    ...overrides,
  };
}

/** A store on a fresh prefix; cleanup deletes everything under it. */
async function makeS3Store(overrides: Partial<S3StoreConfig> = {}) {
  const { endpoint } = await startS3rver();
  const store = await S3BlobStore.open(s3Config(endpoint, overrides));
  return {
    store,
    cleanup: async () => {
      const keys: string[] = [];
      for await (const { key } of store.list('')) keys.push(key);
      await store.delete(keys);
      await store.close();
    },
  };
}

describe('FsBlobStore concat', () => {
  it('links the sources instead of copying them, and a delete takes the whole blob at once', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-fs-concat-'));
    const store = await FsBlobStore.open(dir);
    try {
      const parts = [randomBytes(300_000), randomBytes(200_001)];
      for (const [i, part] of parts.entries()) await store.put(`parts/p${i}`, Readable.from([part]));
      await store.concat('b/joined', ['parts/p0', 'parts/p1']);
      // The pieces are the parts' own files (same inodes): no byte was copied.
      const pieces = path.join(dir, 'b', 'joined+pieces');
      const names = (await readdir(pieces)).sort();
      expect(names).toEqual(['000000-300000', '000001-200001']);
      for (const [i, name] of names.entries()) {
        expect((await stat(path.join(pieces, name))).ino).toBe((await stat(path.join(dir, 'parts', `p${i}`))).ino);
      }
      await store.delete(['b/joined']);
      expect(await readdir(path.join(dir, 'b'))).toEqual([]);
      expect(await readdir(path.join(dir, '.tmp'))).toEqual([]);
      expect((await store.read('parts/p1')).equals(parts[1]!)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a download holds its first piece from get() on; a piece deleted before it is reached fails it with BlobNotFoundError', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-fs-concat-'));
    const store = await FsBlobStore.open(dir);
    try {
      const parts = [randomBytes(2 * 1024 * 1024), randomBytes(100_000)];
      for (const [i, part] of parts.entries()) await store.put(`parts/p${i}`, Readable.from([part]));
      await store.concat('b/joined', ['parts/p0', 'parts/p1']);
      await store.delete(['parts/p0', 'parts/p1']);
      // The stream is made, then the blob is deleted (replaced, say) before a byte is read.
      const stream = await store.get('b/joined');
      await store.delete(['b/joined']);
      const received: Buffer[] = [];
      const failure = await (async () => {
        try {
          for await (const chunk of stream) received.push(chunk as Buffer);
        } catch (error) {
          return error;
        }
        return null;
      })();
      // The first piece, opened by get(), is read whole; the second is gone.
      expect(Buffer.concat(received).equals(parts[0]!)).toBe(true);
      expect(failure).toBeInstanceOf(BlobNotFoundError);
      await expect(store.get('b/joined')).rejects.toBeInstanceOf(BlobNotFoundError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('content hash (the ETag)', () => {
  // The BLAKE3 paper's test vectors: whatever implementation runs, these hold.
  it.each([
    ['', 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262'],
    ['abc', '6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85'],
  ])('BLAKE3(%j) is the published digest', async (input, digest) => {
    expect(await contentHashOf(Buffer.from(input))).toBe(digest);
    const hasher = await createContentHasher();
    hasher.update(Buffer.from(input));
    expect(hasher.digest()).toBe(digest);
  });

  it('the native and the WebAssembly implementations agree on a stream of odd-sized chunks', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const native = await createContentHasher();
    const wasm = await createWasmContentHasher();
    for (let offset = 0, size = 1; offset < bytes.length; offset += size, size = (size * 7 + 3) % 200_000) {
      native.update(bytes.subarray(offset, offset + size));
      wasm.update(bytes.subarray(offset, offset + size));
    }
    const digest = native.digest();
    expect(wasm.digest()).toBe(digest);
    expect(await contentHashOf(bytes)).toBe(digest);
  });

  // Its binary is in the lockfile for this platform: falling back here would be a silent slowdown.
  it.runIf(process.platform === 'linux' && process.arch === 'x64')('runs the native implementation on linux-x64', () => {
    expect(contentHashEngine).toBe('native');
  });
});

describe('FileWrites', () => {
  it('keeps a write that fails while the upload waits for the client for the upload to see, not as an unhandled rejection', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pail-file-writes-'));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    // Opened read-only, so every write fails (EBADF), as a full disk would fail one.
    const filePath = path.join(dir, 'f');
    await writeFile(filePath, '');
    const file = await open(filePath, 'r');
    try {
      const writes = new FileWrites(file);
      // Fills the first (64 KiB) slab, whose write starts in the background.
      await writes.add(Buffer.alloc(64 * 1024, 1));
      // The upload now waits for the client's next bytes while the write fails.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      await expect(writes.finish()).rejects.toMatchObject({ code: 'EBADF' });
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await file.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeBlobStoreContract('S3BlobStore on s3rver', () => makeS3Store());

/** Records the name of every command the store's client sends. */
function recordCommands(store: S3BlobStore): string[] {
  const commands: string[] = [];
  store.client.middlewareStack.add(
    (next, context) => async (args) => {
      commands.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize', name: 'testRecordCommands' },
  );
  return commands;
}

describe('S3BlobStore specifics (s3rver)', () => {
  it('sends a 20 MiB body as a streamed multipart upload and reads back identical bytes', async () => {
    const { store, cleanup } = await makeS3Store();
    try {
      const commands = recordCommands(store);
      const bytes = randomBytes(20 * MiB);
      let produced = 0;
      let producedAtFirstPart: number | undefined;
      store.client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'UploadPartCommand') producedAtFirstPart ??= produced;
          return next(args);
        },
        { step: 'initialize', name: 'testFirstPart' },
      );
      const body = chunked(bytes, 256 * 1024).on('data', (chunk: Buffer) => {
        produced += chunk.length;
      });

      const result = await store.put('big/twenty', body);

      expect(result).toEqual({ size: bytes.length, contentHash: await blake3Hex(bytes) });
      expect(commands).toContain('CreateMultipartUploadCommand');
      expect(commands.filter((c) => c === 'UploadPartCommand')).toHaveLength(3); // 8 + 8 + 4 MiB
      expect(commands).toContain('CompleteMultipartUploadCommand');
      expect(commands).not.toContain('PutObjectCommand');
      // Parts went out while the body was still arriving: it was never held whole.
      expect(producedAtFirstPart).toBeDefined();
      expect(producedAtFirstPart).toBeLessThan(bytes.length);

      expect((await store.head('big/twenty'))?.size).toBe(bytes.length);
      const back = await collect(await store.get('big/twenty'));
      expect(back.length).toBe(bytes.length);
      expect(back.equals(bytes)).toBe(true);
      const tail = await collect(await store.get('big/twenty', { start: 20 * MiB - 10, end: 20 * MiB - 1 }));
      expect(tail.equals(bytes.subarray(20 * MiB - 10))).toBe(true);
    } finally {
      await cleanup();
    }
  });

  it('sends a small body as one PutObject', async () => {
    const { store, cleanup } = await makeS3Store();
    try {
      const commands = recordCommands(store);
      await store.put('small/one', chunked(randomBytes(100_000), 4096));
      expect(commands).toEqual(['PutObjectCommand']);
    } finally {
      await cleanup();
    }
  });

  it('aborts a multipart upload that passes maxBytes and leaves nothing', async () => {
    const { store, cleanup } = await makeS3Store();
    try {
      const commands = recordCommands(store);
      const error = await store.put('big/too-large', chunked(randomBytes(20 * MiB), 256 * 1024), { maxBytes: 12 * MiB }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BlobTooLargeError);
      expect(commands).toContain('CreateMultipartUploadCommand');
      expect(commands).toContain('AbortMultipartUploadCommand');
      expect(commands).not.toContain('CompleteMultipartUploadCommand');
      expect(await store.head('big/too-large')).toBeNull();
      await expect(store.read('big/too-large')).rejects.toBeInstanceOf(BlobNotFoundError);
      const keys: string[] = [];
      for await (const { key } of store.list('')) keys.push(key);
      expect(keys).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it('rejects with the source error when a multipart body fails midway, leaving nothing', async () => {
    const { store, cleanup } = await makeS3Store();
    try {
      const error = await store.put('big/broken', failingAfter(18 * MiB, new Error('disk on fire'))).catch((e: unknown) => e);
      expect((error as Error).message).toBe('disk on fire');
      expect(await store.head('big/broken')).toBeNull();
    } finally {
      await cleanup();
    }
  });

  it('open() creates a missing bucket and check() then passes', async () => {
    const { endpoint } = await startS3rver();
    const bucket = `pail-created-${randomUUID().slice(0, 8)}`;
    const config = s3Config(endpoint, { bucket, prefix: undefined });
    await expect(S3BlobStore.open(config, { createBucket: false })).rejects.toThrow();
    const store = await S3BlobStore.open(config);
    try {
      await store.check();
      await store.put('x/y', chunked(Buffer.from('in the new bucket'), 4));
      expect((await store.read('x/y')).toString()).toBe('in the new bucket');
      // Opening again finds it and does not fail.
      const again = await S3BlobStore.open(config);
      await again.close();
      await store.delete(['x/y']);
    } finally {
      await store.close();
    }
  });

  it('keeps keys under its prefix separate from other prefixes', async () => {
    const { endpoint } = await startS3rver();
    const shared = `shared-${randomUUID()}`;
    const a = new S3BlobStore(s3Config(endpoint, { prefix: `${shared}/a` }));
    const b = new S3BlobStore(s3Config(endpoint, { prefix: `${shared}/b/` }));
    try {
      await a.put('k/1', chunked(Buffer.from('from a'), 2));
      expect(await b.head('k/1')).toBeNull();
      const keys: string[] = [];
      for await (const { key } of a.list('')) keys.push(key);
      expect(keys).toEqual(['k/1']);
      await a.delete(['k/1']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('check() fails when the endpoint is unreachable', async () => {
    const store = new S3BlobStore(s3Config('http://127.0.0.1:1', { prefix: undefined }));
    try {
      await expect(store.check()).rejects.toThrow();
    } finally {
      await store.close();
    }
  });
});
