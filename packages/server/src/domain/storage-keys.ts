/** Where a new version's bytes go: a key of its own, never reused (object-events.ts names a version by it). */
import { randomUUID } from 'node:crypto';

/**
 * A UUIDv7 (RFC 9562): the time in milliseconds, then random bits, so new
 * storage keys land at the end of the storage-key indexes
 * (docs/performance.md). Made from Node's pooled randomUUID().
 */
export function timeOrderedUuid(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; keep its random bits after the version digit.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
