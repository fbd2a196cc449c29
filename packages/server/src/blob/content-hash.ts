/**
 * The content hash that becomes a stored object's ETag: BLAKE3 (256 bits,
 * hex), computed while the bytes stream in. `b3sum file` prints the same.
 *
 * BLAKE3 rather than SHA-256 (Pail's ETag before, and still the ETag of
 * objects stored then): it is as strong, and on one core it hashes a GiB in
 * 0.18 s where SHA-256, even CPU-accelerated, takes 0.6 s. Uploads are
 * CPU-bound on a fast disk, and the hash was most of what Pail spent beyond
 * a bare Node server: a 1 GiB upload on one core went from ~510 to ~710
 * MB/s, the bare-Node baseline's speed (A/B, 4 alternating runs each;
 * without any hash: ~1,100 MB/s).
 *
 * The fast hash is the Rust implementation behind @napi-rs/blake-hash, a
 * prebuilt binary per platform. Where none is installed, the WebAssembly
 * build in hash-wasm gives the same digests, slower (1.4 s per GiB).
 */
import { createBLAKE3 } from 'hash-wasm';

export interface ContentHasher {
  update(chunk: Uint8Array): void;
  /** The hex digest; the hasher is finished. */
  digest(): string;
}

type NativeBlake3 = typeof import('@napi-rs/blake-hash');

const native: NativeBlake3 | null = await import('@napi-rs/blake-hash').then(
  (module) => (module.default ?? module) as NativeBlake3,
  () => null,
);

/** Which implementation runs here, for the start-up log. */
export const contentHashEngine: 'native' | 'webassembly' = native ? 'native' : 'webassembly';

export async function createContentHasher(): Promise<ContentHasher> {
  if (!native) return createWasmContentHasher();
  const hasher = new native.Blake3Hasher();
  return {
    update: (chunk) => void hasher.update(chunk),
    digest: () => hasher.digest('hex'),
  };
}

/** The WebAssembly implementation alone (the fallback, and tests that compare the two). */
export async function createWasmContentHasher(): Promise<ContentHasher> {
  const hasher = await createBLAKE3();
  return {
    update: (chunk) => void hasher.update(chunk),
    digest: () => hasher.digest('hex'),
  };
}

/** The content hash of bytes already in memory (a small upload). */
export async function contentHashOf(bytes: Uint8Array): Promise<string> {
  if (native) return native.blake3(bytes).toString('hex');
  const hasher = await createWasmContentHasher();
  hasher.update(bytes);
  return hasher.digest();
}
