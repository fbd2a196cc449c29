/** Version ids and who made a delete marker: what every write in a versioned bucket names (domain/versions.ts). */
import { randomUUID } from 'node:crypto';
import { actorOf } from './audit.js';
import type { Principal } from './principal.js';

/**
 * A new version id: 32 hex digits, time first (a UUIDv7's bits), so ids made later mostly sort later.
 * Every upload makes one (the bucket's versioning is known only in the commit), so its 80 random bits
 * come from Node's pooled randomUUID(), not a randomBytes() call of their own.
 */
export function newVersionId(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; its first 12 and last 8 hex digits are all random.
  const uuid = randomUUID();
  return `${time}${uuid.slice(0, 8)}${uuid.slice(9, 13)}${uuid.slice(28)}`;
}

/** A version id as a client may send it: ours, or `null` (the null version). Anything else is malformed (S3: 400 InvalidArgument). */
export function isWellFormedVersionId(raw: string): boolean {
  return raw === 'null' || /^[0-9a-f]{32}$/.test(raw);
}

/** A version id as a client sent it, as stored: `null` names the null version (null). */
export const storedVersionId = (raw: string): string | null => (raw === 'null' ? null : raw);

/** A version id as clients see it: the null version is `null`. */
export const shownVersionId = (stored: string | null | undefined): string => stored ?? 'null';

/** Who did it, as a delete marker keeps it for the trash's who/when: the audit log's name for the actor (audit.ts). */
export const principalTag = (principal: Principal | null | undefined): string | null => (principal ? actorOf(principal) : null);
