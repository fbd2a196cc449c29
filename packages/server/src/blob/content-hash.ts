/**
 * The content hash that becomes a stored object's ETag: BLAKE3 (256 bits,
 * hex), computed while the bytes stream in. `b3sum file` prints the same.
 *
 * BLAKE3 rather than SHA-256 (Pail's ETag before, and still the ETag of
 * objects stored then): it is as strong and several times faster, and uploads
 * are CPU-bound on a fast disk, where the hash was most of what Pail spent
 * beyond a bare Node server. The fast path is the Rust implementation behind
 * @napi-rs/blake-hash (a prebuilt binary per platform); where none is
 * installed, the WebAssembly build in hash-wasm gives the same digests, more
 * slowly. See docs/performance.md.
 */
import type * as Blake3Module from '@napi-rs/blake-hash';

export interface ContentHasher {
  update(chunk: Uint8Array): void;
  /** The hex digest; the hasher is finished. */
  digest(): string;
}

type NativeBlake3 = Pick<typeof Blake3Module, 'Blake3Hasher' | 'blake3'>;

const native: NativeBlake3 | null = await import('@napi-rs/blake-hash').then(
  (module): NativeBlake3 => module.default ?? module,
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

/** The WebAssembly implementation alone (the fallback, and tests that compare the two); loaded only where it runs. */
export async function createWasmContentHasher(): Promise<ContentHasher> {
  const { createBLAKE3 } = await import('hash-wasm');
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
