/**
 * The expected ETag of some bytes: BLAKE3, hex, from hash-wasm's WebAssembly
 * build, an implementation independent of the native one the server uses
 * (src/blob/content-hash.ts).
 */
import { blake3 } from 'hash-wasm';

export function blake3Hex(bytes: Uint8Array): Promise<string> {
  return blake3(bytes);
}
