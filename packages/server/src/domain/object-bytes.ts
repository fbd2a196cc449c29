/**
 * Where a file's bytes are: small files' inline in the database (written with
 * their row), others in the blob store, and hot small ones also in memory.
 * This file alone decides which, for reading and for removing them.
 */
import type { Readable } from 'node:stream';
import { BlobNotFoundError, type ByteRange } from '../blob/blob-store.js';
import { giveAway } from '../blob/release-chunk.js';
import type { StoredVersion } from '../db/repositories/objects.js';
import type { ObjectRow } from '../db/schema.js';
import type { StoragePorts } from './ports.js';

type BytePorts = Pick<StoragePorts, 'writes' | 'blobs' | 'caches'>;

/** Inline in the database, or small enough for memory: read whole, as one buffer. */
const isSmall = (ports: BytePorts, object: ObjectRow): boolean => Boolean(object.inline) || ports.caches.bytes.fits(object.size);

/**
 * A small file's whole content: from memory, else from the database or the blob store, then kept in memory for
 * the next reader (`cache`) or handed to this one alone (`give`: release-chunk.ts giveAway).
 */
async function readSmall(ports: BytePorts, object: ObjectRow, then: 'cache' | 'give'): Promise<Buffer> {
  const cached = ports.caches.bytes.get(object.storage_key);
  if (cached) return cached;
  const bytes = object.inline ? await readInline(ports, object.storage_key) : await ports.blobs.read(object.storage_key);
  if (then === 'cache') ports.caches.bytes.set(object.storage_key, bytes);
  else giveAway(bytes);
  return bytes;
}

async function readInline(ports: BytePorts, storageKey: string): Promise<Buffer> {
  const bytes = await ports.writes.readInline(storageKey);
  if (!bytes) throw new BlobNotFoundError(storageKey);
  return bytes;
}

/** The bytes to send (all, or one range): a buffer for small files, a stream from the store for others. */
export async function objectBody(ports: BytePorts, object: ObjectRow, range: ByteRange | null): Promise<Buffer | Readable> {
  if (isSmall(ports, object)) {
    const bytes = await readSmall(ports, object, 'cache');
    return range ? bytes.subarray(range.start, range.end + 1) : bytes;
  }
  if (object.size === 0) return Buffer.alloc(0);
  return ports.blobs.get(object.storage_key, range ?? undefined);
}

/**
 * A whole file's bytes for a reader of many files, each once (a zip): a small
 * file comes from memory when it is there, but is not put there, so one
 * download of a large folder neither pushes the hot files out of the cache
 * nor keeps its bytes alive once they are sent. A buffer read here is the
 * reader's alone (release-chunk.ts giveAway), freed as soon as it has left
 * (http/sent-chunks.ts).
 */
export async function passingBody(ports: BytePorts, object: ObjectRow): Promise<Buffer | Readable> {
  if (isSmall(ports, object)) return readSmall(ports, object, 'give');
  return object.size === 0 ? Buffer.alloc(0) : ports.blobs.get(object.storage_key);
}

type RemovalPorts = Pick<StoragePorts, 'blobs' | 'durable'>;

/**
 * Deletes replaced or deleted versions' bytes from the blob store (inline
 * bytes left with the transaction that retired them; a copy in memory with
 * the change's announcement, cache/caches.ts), as dropBlobs does. After an
 * upload or a delete this is best effort, as garbage collection finds what a
 * crash or a store outage leaves; a bucket's purge (`strict`) must not go on
 * to remove rows whose blobs are still there.
 */
export async function retireVersions(ports: RemovalPorts, versions: StoredVersion[], options: { strict?: boolean } = {}): Promise<void> {
  const inStore = versions.filter((version) => !version.inline).map((version) => version.storage_key);
  await dropBlobs(ports, inStore, options);
}

/**
 * Deletes blobs whose rows a change has just removed, once that change is on
 * disk (StoragePorts.durable; nothing to wait for when it already is): a power
 * cut then leaves a row with its bytes, or neither. Best effort unless
 * `strict`: a blob left behind is unreferenced, and garbage collection removes it.
 */
export async function dropBlobs(ports: RemovalPorts, keys: string[], options: { strict?: boolean } = {}): Promise<void> {
  if (keys.length === 0) return;
  await ports.durable();
  const removal = ports.blobs.delete(keys);
  await (options.strict ? removal : removal.catch(() => {}));
}
