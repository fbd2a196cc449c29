/**
 * Per-bucket limits (decisions.md, "Per-bucket limits"): the largest file a
 * bucket accepts and the types it accepts. Every upload path checks them
 * before any byte is kept (uploads.ts): the size as declared and as it
 * streams, the type as declared and as the file's first bytes say (file-type
 * reads their magic numbers). A generic declared type (application/
 * octet-stream, or none) is replaced by the detected one, which the file
 * then keeps.
 */
import { fileTypeFromBuffer, supportedMimeTypes } from 'file-type';
import { findBucketRules, type BucketRulesRow } from '../db/repositories/buckets.js';
import type { BucketVersioning, Db } from '../db/schema.js';
import type { MetadataCache } from '../cache/metadata-cache.js';
import { errors } from './errors.js';
import { defaultRetentionOf, type BucketLockRule } from './object-lock.js';

export interface BucketRules {
  /** The largest file it accepts; null: the server's limit only. */
  maxFileBytes: number | null;
  /** The MIME types or `type/*` patterns it accepts; null: any. */
  allowedTypes: string[] | null;
  /** Its versioning, as an upload sizes its reservation (a kept version frees nothing); the commit reads it afresh. */
  versioning: BucketVersioning;
  /** Its object lock and default retention, which every new version's lock starts from (object-lock.ts). */
  lock: BucketLockRule;
  /** Its lifecycle rules' JSON, for the expiry a write tells (lifecycle-expiry.ts); null: none. */
  lifecycleRules: string | null;
}

/** How many first bytes the type detection reads (file-type needs at most this many for the types it knows). */
export const TYPE_SNIFF_BYTES = 4100;

const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/** A MIME type, or `type/*`: lowercase, as RFC 6838 allows its names. */
const TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126})$/;

/** Declared names that file-type reports under another (its name is the registered one). */
const ALIASES: Record<string, string> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'application/x-zip-compressed': 'application/zip',
  'application/x-pdf': 'application/pdf',
  'video/x-m4v': 'video/mp4',
};

export const NO_RULES: BucketRules = {
  maxFileBytes: null,
  allowedTypes: null,
  versioning: 'unversioned',
  lock: { enabled: false, defaultRetention: null },
  lifecycleRules: null,
};

export function rulesOf(row: BucketRulesRow): BucketRules {
  return {
    maxFileBytes: row.max_file_bytes,
    allowedTypes: row.allowed_types === null ? null : (JSON.parse(row.allowed_types) as string[]),
    versioning: row.versioning,
    lock: { enabled: row.object_lock === 1, defaultRetention: defaultRetentionOf(row) },
    lifecycleRules: row.lifecycle_rules,
  };
}

/** A bucket's rules, as the upload paths read them: cached, and forgotten on every instance when they change. */
export async function bucketRules(
  ports: { db: Db; caches: { readonly bucketRules: MetadataCache<BucketRules> | null } },
  bucketId: number,
): Promise<BucketRules> {
  const cache = ports.caches.bucketRules;
  const key = String(bucketId);
  const cached = cache?.get(key);
  if (cached) return cached;
  const mark = cache?.mark();
  const row = await findBucketRules(ports.db, bucketId);
  const rules = row ? rulesOf(row) : NO_RULES;
  if (cache && mark !== undefined) cache.set(key, rules, mark);
  return rules;
}

/** The limits a create or PATCH body gives, checked and in the columns' form; absent fields stay absent. */
export function parseLimits(input: { max_file_bytes?: number | null; allowed_types?: string[] | null }): {
  max_file_bytes?: number | null;
  allowed_types?: string | null;
} {
  const out: { max_file_bytes?: number | null; allowed_types?: string | null } = {};
  if (input.max_file_bytes !== undefined) out.max_file_bytes = input.max_file_bytes;
  if (input.allowed_types !== undefined) {
    if (input.allowed_types === null) {
      out.allowed_types = null;
    } else {
      const types = [...new Set(input.allowed_types.map((type) => type.trim().toLowerCase()))];
      const bad = types.find((type) => !TYPE_PATTERN.test(type));
      if (bad !== undefined) throw errors.validation(`allowed_types: "${bad}" is not a MIME type or a type/* pattern (e.g. image/png, image/*)`);
      if (types.length === 0) throw errors.validation('allowed_types must name at least one type, or be null to accept any');
      out.allowed_types = JSON.stringify(types);
    }
  }
  return out;
}

const canonical = (type: string): string => {
  const bare = (type.split(';')[0] ?? '').trim().toLowerCase();
  return ALIASES[bare] ?? bare;
};

export function typeAllowed(allowed: string[], type: string): boolean {
  const [family] = type.split('/');
  return allowed.some((pattern) => pattern === type || (pattern.endsWith('/*') && pattern.slice(0, -2) === family));
}

function notAllowed(type: string, allowed: string[]): Error {
  return errors.unsupportedMediaType(`File type ${type} is not allowed in this bucket (allowed: ${allowed.join(', ')})`);
}

/** Refuses a declared type the bucket does not take, before any byte is read; a generic one waits for the bytes. */
export function checkDeclaredType(rules: BucketRules, declared: string): void {
  if (rules.allowedTypes === null) return;
  const type = canonical(declared);
  if (!GENERIC_TYPES.has(type) && !typeAllowed(rules.allowedTypes, type)) throw notAllowed(type, rules.allowedTypes);
}

/**
 * The type the file is, from its declared type and its first bytes, if the
 * bucket takes it; else 415. In a bucket with allowed types, a declared type
 * the bytes contradict (a text file named photo.png, declared image/png) is
 * refused even when the bucket takes both; a generic one becomes the detected
 * type. A bucket without them keeps the declared type, unchecked. Types file-type cannot
 * recognise (text formats, SVG) are taken as declared when the bytes show
 * nothing else.
 */
export async function checkedType(rules: BucketRules, declared: string, head: Uint8Array): Promise<string> {
  const allowed = rules.allowedTypes;
  if (allowed === null) return declared;
  const claimed = canonical(declared);
  const detected = (await fileTypeFromBuffer(head))?.mime;
  let type: string;
  if (GENERIC_TYPES.has(claimed)) {
    type = detected ?? 'application/octet-stream';
  } else if (detected !== undefined && detected !== claimed) {
    throw errors.unsupportedMediaType(`The file's content is ${detected}, not the declared ${claimed}`);
  } else if (detected === undefined && supportedMimeTypes.has(claimed)) {
    throw errors.unsupportedMediaType(`The file's content is not ${claimed}, as declared`);
  } else {
    type = claimed;
  }
  if (!typeAllowed(allowed, type)) throw notAllowed(type, allowed);
  // The declared form (with its parameters) when the bytes agree with it; the detected type when it stood in for a generic one.
  return GENERIC_TYPES.has(claimed) ? type : declared;
}
