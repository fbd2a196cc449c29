/**
 * Blob keys are made by the server (`<storage_bucket_name>/<random id>`), never
 * from user filenames, but every store still checks them so that a bug elsewhere
 * cannot write outside its root.
 */
import path from 'node:path';

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export function assertSafeKey(key: string): void {
  if (key.length === 0 || key.length > 512 || !KEY_PATTERN.test(key)) {
    throw new Error(`Unsafe blob key: ${JSON.stringify(key)}`);
  }
  for (const part of key.split('/')) {
    if (part === '.' || part === '..') throw new Error(`Unsafe blob key: ${JSON.stringify(key)}`);
  }
}

/** The absolute path of `key` under `root`; throws if it would leave `root`. */
export function resolveUnder(root: string, key: string): string {
  assertSafeKey(key);
  const resolved = path.resolve(root, key);
  const base = path.resolve(root);
  if (resolved !== base && !resolved.startsWith(base + path.sep)) {
    throw new Error(`Blob key escapes the store: ${JSON.stringify(key)}`);
  }
  return resolved;
}
