/**
 * The behaviour every BlobStore must have. Each test gets a fresh, empty store
 * from `makeStore` and cleans it up afterwards, so tests can list freely.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from '../src/blob/blob-store.js';
import { blake3Hex } from './helpers/blake3.js';

export interface StoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

const MiB = 1024 * 1024;

export async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks);
}

/** `bytes` delivered in chunks of `chunkSize`, yielding to the event loop now and then. */
export function chunked(bytes: Buffer, chunkSize: number): Readable {
  return Readable.from(
    (async function* () {
      for (let offset = 0, n = 0; offset < bytes.length; offset += chunkSize, n++) {
        if (n % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
        yield bytes.subarray(offset, Math.min(offset + chunkSize, bytes.length));
      }
    })(),
    { objectMode: false },
  );
}

/** Delivers `bytesBeforeError` bytes, then fails with `error`. */
export function failingAfter(bytesBeforeError: number, error: Error, chunkSize = 64 * 1024): Readable {
  return Readable.from(
    (async function* () {
      let sent = 0;
      while (sent < bytesBeforeError) {
        const n = Math.min(chunkSize, bytesBeforeError - sent);
        sent += n;
        await new Promise((resolve) => setImmediate(resolve));
        yield randomBytes(n);
      }
      throw error;
    })(),
    { objectMode: false },
  );
}

async function listKeys(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of store.list(prefix)) {
    expect(entry.modifiedAt).toBeInstanceOf(Date);
    keys.push(entry.key);
  }
  return keys.sort();
}

export function describeBlobStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let fixture: StoreFixture | undefined;
    let store: BlobStore;

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture?.cleanup();
      fixture = undefined;
    });

    async function putBytes(key: string, bytes: Buffer) {
      return store.put(key, Readable.from([bytes]));
    }

    describe('put and get', () => {
      it('returns identical bytes with correct size and BLAKE3 content hash', async () => {
        const bytes = Buffer.from('hello, pail\n');
        const result = await putBytes('b1/hello', bytes);
        expect(result).toEqual({ size: bytes.length, contentHash: await blake3Hex(bytes) });
        const stream = await store.get('b1/hello');
        expect(stream).toBeInstanceOf(Readable);
        expect(await collect(stream)).toEqual(bytes);
      });

      it('stores a 0-byte blob', async () => {
        const result = await store.put('b1/empty', Readable.from([]));
        expect(result).toEqual({ size: 0, contentHash: 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262' });
        expect((await collect(await store.get('b1/empty'))).length).toBe(0);
        expect((await store.read('b1/empty')).length).toBe(0);
        expect((await store.head('b1/empty'))?.size).toBe(0);
      });

      it('round-trips a multi-MiB blob of random bytes', async () => {
        const bytes = randomBytes(5 * MiB + 12_345);
        const result = await store.put('b1/big', chunked(bytes, 64 * 1024));
        expect(result).toEqual({ size: bytes.length, contentHash: await blake3Hex(bytes) });
        const back = await collect(await store.get('b1/big'));
        expect(back.length).toBe(bytes.length);
        expect(back.equals(bytes)).toBe(true);
      });

      it('accepts a body that arrives in many small chunks', async () => {
        const bytes = randomBytes(300_000);
        const body = Readable.from(
          (async function* () {
            let offset = 0;
            for (let i = 0; offset < bytes.length; i++) {
              const n = 1 + (i % 97);
              if (i % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
              yield bytes.subarray(offset, offset + n);
              offset += n;
            }
          })(),
          { objectMode: false },
        );
        const result = await store.put('b1/chunky', body);
        expect(result).toEqual({ size: bytes.length, contentHash: await blake3Hex(bytes) });
        expect((await store.read('b1/chunky')).equals(bytes)).toBe(true);
      });

      it('accepts string chunks and counts bytes, not characters', async () => {
        const text = 'größe ✓ 文字';
        const result = await store.put('b1/text', Readable.from([text, text], { objectMode: false }));
        const bytes = Buffer.from(text + text);
        expect(result).toEqual({ size: bytes.length, contentHash: await blake3Hex(bytes) });
        expect((await store.read('b1/text')).equals(bytes)).toBe(true);
      });

      it('handles several puts at once', async () => {
        const blobs = Array.from({ length: 8 }, (_, i) => ({ key: `b1/par-${i}`, bytes: randomBytes(10_000 + i) }));
        await Promise.all(blobs.map(({ key, bytes }) => store.put(key, chunked(bytes, 1000))));
        for (const { key, bytes } of blobs) expect((await store.read(key)).equals(bytes)).toBe(true);
      });

      it('overwrites: the new bytes replace the old ones entirely', async () => {
        await putBytes('b1/over', Buffer.from('a much longer first version'));
        const result = await putBytes('b1/over', Buffer.from('short'));
        expect(result.size).toBe(5);
        expect((await store.read('b1/over')).toString()).toBe('short');
        expect((await collect(await store.get('b1/over'))).toString()).toBe('short');
        expect((await store.head('b1/over'))?.size).toBe(5);
      });
    });

    describe('ranges', () => {
      const bytes = randomBytes(1000);
      beforeEach(async () => {
        await putBytes('r/blob', bytes);
      });

      it.each([
        ['first byte', 0, 0],
        ['middle', 100, 299],
        ['last byte', 999, 999],
        ['whole', 0, 999],
      ])('returns the %s', async (_label, start, end) => {
        const part = await collect(await store.get('r/blob', { start, end }));
        expect(part.length).toBe(end - start + 1);
        expect(part.equals(bytes.subarray(start, end + 1))).toBe(true);
      });

      it('returns everything without a range', async () => {
        expect((await collect(await store.get('r/blob'))).equals(bytes)).toBe(true);
      });

      it('returns ranges of a multi-MiB blob that start, end and cross at read-size boundaries', async () => {
        const big = randomBytes(3 * MiB + 7);
        await putBytes('r/big', big);
        for (const [start, end] of [
          [0, MiB - 1],
          [MiB - 1, MiB],
          [MiB - 3, 2 * MiB + 2],
          [64 * 1024, 3 * MiB + 6],
          [3 * MiB, 3 * MiB + 6],
        ] as const) {
          const part = await collect(await store.get('r/big', { start, end }));
          expect(part.length).toBe(end - start + 1);
          expect(part.equals(big.subarray(start, end + 1))).toBe(true);
        }
      });
    });

    describe('read and head', () => {
      it('read returns the whole content as a Buffer', async () => {
        const bytes = randomBytes(4096);
        await putBytes('h/x', bytes);
        const back = await store.read('h/x');
        expect(Buffer.isBuffer(back)).toBe(true);
        expect(back.equals(bytes)).toBe(true);
      });

      it('head reports size and a recent modification time', async () => {
        const before = Date.now();
        await putBytes('h/y', randomBytes(777));
        const info = await store.head('h/y');
        expect(info?.size).toBe(777);
        expect(info?.modifiedAt).toBeInstanceOf(Date);
        // Allow for coarse (1 s) timestamps and a little clock skew.
        expect(Math.abs((info?.modifiedAt.getTime() ?? 0) - before)).toBeLessThan(60_000);
      });

      it('head is null for a missing key', async () => {
        expect(await store.head('h/missing')).toBeNull();
        await putBytes('h/dir/file', Buffer.from('x'));
        expect(await store.head('h/dir/other')).toBeNull();
        // A key that is only a leading part of other keys is not a blob either.
        expect(await store.head('h/dir')).toBeNull();
        await expect(store.read('h/dir')).rejects.toBeInstanceOf(BlobNotFoundError);
        await expect(store.get('h/dir')).rejects.toBeInstanceOf(BlobNotFoundError);
        await store.delete(['h/dir']);
        expect((await store.read('h/dir/file')).toString()).toBe('x');
      });

      it('get and read of a missing key reject with BlobNotFoundError', async () => {
        await expect(store.get('h/nope')).rejects.toBeInstanceOf(BlobNotFoundError);
        await expect(store.get('h/nope', { start: 0, end: 10 })).rejects.toBeInstanceOf(BlobNotFoundError);
        await expect(store.read('h/nope')).rejects.toBeInstanceOf(BlobNotFoundError);
      });
    });

    describe('all-or-nothing puts', () => {
      it('accepts exactly maxBytes', async () => {
        const bytes = randomBytes(1000);
        const result = await store.put('s/exact', chunked(bytes, 100), { maxBytes: 1000 });
        expect(result.size).toBe(1000);
      });

      it('rejects past maxBytes with BlobTooLargeError and leaves nothing', async () => {
        const body = chunked(randomBytes(5000), 100);
        const error = await store.put('s/big', body, { maxBytes: 1000 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(BlobTooLargeError);
        expect((error as BlobTooLargeError).limit).toBe(1000);
        expect(await store.head('s/big')).toBeNull();
        await expect(store.read('s/big')).rejects.toBeInstanceOf(BlobNotFoundError);
        expect(await listKeys(store, '')).toEqual([]);
      });

      it('a rejected put keeps the previous bytes under the key', async () => {
        await putBytes('s/keep', Buffer.from('old'));
        await expect(store.put('s/keep', chunked(randomBytes(5000), 100), { maxBytes: 1000 })).rejects.toBeInstanceOf(BlobTooLargeError);
        await expect(store.put('s/keep', failingAfter(3000, new Error('boom')))).rejects.toThrow('boom');
        expect((await store.read('s/keep')).toString()).toBe('old');
      });

      it('rejects when the source stream fails midway and leaves nothing', async () => {
        const error = await store.put('s/broken', failingAfter(200_000, new Error('source broke'))).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toBe('source broke');
        expect(await store.head('s/broken')).toBeNull();
        expect(await listKeys(store, '')).toEqual([]);
      });

      it('refuses unsafe keys', async () => {
        for (const key of ['../x', '/abs', 'a/../../b', '', 'a//b', './a', 'a/', 'nul\0byte']) {
          await expect(store.put(key, Readable.from([Buffer.from('x')])), `put ${JSON.stringify(key)}`).rejects.toThrow();
        }
        await expect(store.get('../x')).rejects.toThrow();
        await expect(store.read('../x')).rejects.toThrow();
        await expect(store.head('../x')).rejects.toThrow();
        await expect(store.delete(['../x'])).rejects.toThrow();
        expect(await listKeys(store, '')).toEqual([]);
      });
    });

    describe('delete', () => {
      it('deletes present keys and ignores missing ones', async () => {
        await putBytes('d/a', Buffer.from('a'));
        await putBytes('d/b', Buffer.from('b'));
        await putBytes('d/c', Buffer.from('c'));
        await store.delete(['d/a', 'd/missing', 'd/b', 'other/missing']);
        expect(await store.head('d/a')).toBeNull();
        expect(await store.head('d/b')).toBeNull();
        expect((await store.read('d/c')).toString()).toBe('c');
        expect(await listKeys(store, '')).toEqual(['d/c']);
      });

      it('accepts an empty list and repeated keys', async () => {
        await store.delete([]);
        await putBytes('d/twice', Buffer.from('x'));
        await store.delete(['d/twice', 'd/twice']);
        expect(await store.head('d/twice')).toBeNull();
      });

      it('deletes a batch of a few dozen keys', async () => {
        const keys = Array.from({ length: 40 }, (_, i) => `batch/k${String(i).padStart(2, '0')}`);
        await Promise.all(keys.map((key) => putBytes(key, Buffer.from(key))));
        expect(await listKeys(store, 'batch/')).toEqual(keys);
        await store.delete(keys);
        expect(await listKeys(store, 'batch/')).toEqual([]);
        expect(await store.head('batch/k07')).toBeNull();
      });
    });

    describe('list', () => {
      beforeEach(async () => {
        for (const key of ['p/a', 'p/b/c', 'p/b/d/e', 'p2/x', 'pa', 'q/p/y', 'file']) {
          await putBytes(key, Buffer.from(key));
        }
      });

      it('returns exactly the keys under a prefix', async () => {
        expect(await listKeys(store, 'p/')).toEqual(['p/a', 'p/b/c', 'p/b/d/e']);
        expect(await listKeys(store, 'p/b/')).toEqual(['p/b/c', 'p/b/d/e']);
        expect(await listKeys(store, 'p')).toEqual(['p/a', 'p/b/c', 'p/b/d/e', 'p2/x', 'pa']);
        expect(await listKeys(store, 'p/b/d/e')).toEqual(['p/b/d/e']);
      });

      it('returns every key for an empty prefix', async () => {
        expect(await listKeys(store, '')).toEqual(['file', 'p/a', 'p/b/c', 'p/b/d/e', 'p2/x', 'pa', 'q/p/y']);
      });

      it('returns nothing for a prefix with no keys, even one that extends a key', async () => {
        expect(await listKeys(store, 'zzz/')).toEqual([]);
        expect(await listKeys(store, 'file/')).toEqual([]);
        expect(await listKeys(store, 'pa/')).toEqual([]);
      });
    });

    describe('put without a content hash', () => {
      it('stores the bytes and reports an empty hash', async () => {
        const bytes = randomBytes(700_000);
        const result = await store.put('b1/nohash', chunked(bytes, 64 * 1024), { contentHash: false });
        expect(result).toEqual({ size: bytes.length, contentHash: '' });
        expect((await collect(await store.get('b1/nohash'))).equals(bytes)).toBe(true);
      });
    });

    describe('concat', () => {
      it('stores the sources one after another and leaves them as they were', async () => {
        // Odd sizes: blocks that end mid-source, an empty source and a one-byte one.
        const parts = [randomBytes(5 * MiB + 12_345), Buffer.alloc(0), randomBytes(1), randomBytes(700_001), randomBytes(64 * 1024)];
        const keys = parts.map((_, i) => `parts/p${i}`);
        for (const [i, part] of parts.entries()) await putBytes(keys[i]!, part);
        const whole = Buffer.concat(parts);
        expect(await store.concat('b1/whole', keys)).toEqual({ size: whole.length });
        expect((await collect(await store.get('b1/whole'))).equals(whole)).toBe(true);
        expect((await store.head('b1/whole'))?.size).toBe(whole.length);
        for (const [i, part] of parts.entries()) expect((await store.read(keys[i]!)).equals(part)).toBe(true);
      });

      it('stores one source as a copy, and none as a 0-byte blob', async () => {
        const bytes = randomBytes(300_000);
        await putBytes('parts/only', bytes);
        expect(await store.concat('b1/copy', ['parts/only'])).toEqual({ size: bytes.length });
        expect((await store.read('b1/copy')).equals(bytes)).toBe(true);
        expect(await store.concat('b1/none', [])).toEqual({ size: 0 });
        expect((await store.read('b1/none')).length).toBe(0);
      });

      it('rejects with BlobNotFoundError when a source is missing, leaving nothing under the key', async () => {
        await putBytes('parts/a', randomBytes(100_000));
        for (const sources of [['parts/gone'], ['parts/a', 'parts/gone']]) {
          await expect(store.concat('b1/never', sources)).rejects.toBeInstanceOf(BlobNotFoundError);
          expect(await store.head('b1/never')).toBeNull();
        }
        expect(await listKeys(store, '')).toEqual(['parts/a']);
      });

      it('is a blob like any other: whole after its sources are deleted, read in ranges, listed once, deleted', async () => {
        const parts = [randomBytes(1 * MiB + 7), randomBytes(333_333), Buffer.alloc(0), randomBytes(2 * MiB)];
        const keys = parts.map((_, i) => `parts/q${i}`);
        for (const [i, part] of parts.entries()) await putBytes(keys[i]!, part);
        const whole = Buffer.concat(parts);
        await store.concat('b1/joined', keys);
        await store.delete(keys);

        expect((await collect(await store.get('b1/joined'))).equals(whole)).toBe(true);
        expect((await store.read('b1/joined')).equals(whole)).toBe(true);
        expect((await store.head('b1/joined'))?.size).toBe(whole.length);
        // Ranges that start, end and cross at the sources' boundaries.
        const boundary = parts[0]!.length;
        for (const [start, end] of [
          [0, 0],
          [boundary - 1, boundary],
          [boundary - 10, boundary + 333_333 + 10],
          [boundary, boundary + 333_332],
          [whole.length - 5, whole.length - 1],
          [17, whole.length - 1],
        ] as const) {
          expect((await collect(await store.get('b1/joined', { start, end }))).equals(whole.subarray(start, end + 1))).toBe(true);
        }
        expect(await listKeys(store, '')).toEqual(['b1/joined']);
        expect(await listKeys(store, 'b1/j')).toEqual(['b1/joined']);
        expect(await listKeys(store, 'b1/x')).toEqual([]);

        // A concatenation of a concatenation, then the first one deleted: the second stays whole.
        await putBytes('parts/tail', parts[1]!);
        await store.concat('b1/again', ['b1/joined', 'parts/tail']);
        await store.delete(['b1/joined']);
        expect(await store.head('b1/joined')).toBeNull();
        await expect(store.get('b1/joined')).rejects.toBeInstanceOf(BlobNotFoundError);
        await expect(store.read('b1/joined')).rejects.toBeInstanceOf(BlobNotFoundError);
        expect((await collect(await store.get('b1/again'))).equals(Buffer.concat([whole, parts[1]!]))).toBe(true);

        await store.delete(['b1/again', 'parts/tail']);
        expect(await listKeys(store, '')).toEqual([]);
      });
    });

    it('check() resolves for a working store', async () => {
      await expect(store.check()).resolves.toBeUndefined();
    });
  });
}
