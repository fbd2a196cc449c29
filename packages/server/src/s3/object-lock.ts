/**
 * Object lock in S3's terms: the x-amz-object-lock-* headers of a write (and
 * of a read's answer), x-amz-bypass-governance-retention, the Retention,
 * LegalHold and ObjectLockConfiguration documents, and S3's codes for what
 * the domain refuses (domain/object-lock.ts and lock-changes.ts hold the rules).
 */
import type { FastifyRequest } from 'fastify';
import type { RetentionMode } from '@pail/shared';
import type { BucketRow } from '../db/schema.js';
import { mayBypassGovernance } from '../domain/authorize.js';
import { isRetentionMode, type RequestedLock, type VersionLock } from '../domain/object-lock.js';
import type { Principal } from '../domain/principal.js';
import { S3Error, s3Errors } from './errors.js';
import { field, parseXml, type XmlElement } from './xml.js';

const header = (headers: FastifyRequest['headers'], name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** S3's answer to a lock asked of a bucket made without one, and to the lock sub-resources on it. */
export const lockNotEnabled = (): S3Error => s3Errors.invalidRequest('Bucket is missing Object Lock Configuration');

/** The lock a write's headers (or a form's fields, named the same) ask for; undefined when they ask for none. */
export function requestedLockOf(headers: FastifyRequest['headers'] | Record<string, string | undefined>): RequestedLock | undefined {
  const mode = header(headers, 'x-amz-object-lock-mode');
  const until = header(headers, 'x-amz-object-lock-retain-until-date');
  const hold = header(headers, 'x-amz-object-lock-legal-hold');
  if (mode === undefined && until === undefined && hold === undefined) return undefined;
  const lock: RequestedLock = {};
  if (mode !== undefined) {
    if (!isRetentionMode(mode)) throw s3Errors.invalidArgument('Unknown wormMode directive.');
    lock.mode = mode;
  }
  if (until !== undefined) {
    if (Number.isNaN(Date.parse(until))) throw s3Errors.invalidArgument('The retain until date must be provided in ISO 8601 format');
    lock.retainUntil = until;
  }
  if (hold !== undefined) {
    if (hold !== 'ON' && hold !== 'OFF') throw s3Errors.invalidArgument("Legal Hold must be either of 'ON' or 'OFF'");
    lock.legalHold = hold === 'ON';
  }
  if ((lock.mode === undefined) !== (lock.retainUntil === undefined)) {
    throw s3Errors.invalidArgument('x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied');
  }
  return lock;
}

/**
 * Refuses a lock asked of a bucket made without object lock (S3's InvalidRequest), and
 * a PutObject that would lock its version without Content-MD5 or a checksum, as S3 does:
 * one with lock headers, or into a bucket with a default retention.
 */
export function checkLockedWrite(
  headers: FastifyRequest['headers'],
  requested: RequestedLock | undefined,
  lock: { enabled: boolean; defaultRetention: unknown },
  needsDigest: boolean,
): void {
  if (requested !== undefined && !lock.enabled) throw lockNotEnabled();
  const locks = requested !== undefined || (lock.enabled && lock.defaultRetention !== null);
  if (!needsDigest || !locks) return;
  // A payload hash the request signs (SigV4's x-amz-content-sha256, or its signed chunks) checks every byte as a
  // checksum would; Pail takes it as one, so tools that sign payloads (restic's minio-go) can write to a locked bucket.
  const signedPayload = /^([0-9a-f]{64}|STREAMING-AWS4-HMAC-SHA256-PAYLOAD(-TRAILER)?)$/.test(String(headers['x-amz-content-sha256'] ?? ''));
  const digest =
    signedPayload ||
    headers['content-md5'] !== undefined ||
    headers['x-amz-sdk-checksum-algorithm'] !== undefined ||
    headers['x-amz-trailer'] !== undefined ||
    Object.keys(headers).some((name) => name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-mode');
  if (!digest) throw s3Errors.invalidRequest('Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters');
}

/** Whether the request asks to bypass GOVERNANCE retention and its key may (the bypass-governance permission). */
export const bypassAsked = (request: FastifyRequest, principal: Principal): boolean =>
  mayBypassGovernance(principal, String(request.headers['x-amz-bypass-governance-retention'] ?? '').toLowerCase() === 'true');

/** The x-amz-object-lock-* headers a read answers with (none for a version without a lock). */
export function lockHeaders(lock: VersionLock): Record<string, string> {
  const headers: Record<string, string> = {};
  if (lock.mode !== null && lock.retainUntil !== null) {
    headers['x-amz-object-lock-mode'] = lock.mode;
    headers['x-amz-object-lock-retain-until-date'] = lock.retainUntil;
  }
  if (lock.legalHold) headers['x-amz-object-lock-legal-hold'] = 'ON';
  return headers;
}

/** A Retention document: its mode and date, or null for an empty one (removing the retention). */
export function retentionFromXml(body: string): { mode: RetentionMode; retainUntil: string } | null {
  const parsed = parseXml(body);
  if (parsed === null) throw s3Errors.malformedXml();
  const retention = field(parsed, 'Retention');
  if (retention === undefined) throw s3Errors.malformedXml();
  const mode = field(retention, 'Mode');
  const until = field(retention, 'RetainUntilDate');
  if (mode === undefined && until === undefined) return null;
  if (!isRetentionMode(mode) || typeof until !== 'string') throw s3Errors.malformedXml();
  if (Number.isNaN(Date.parse(until))) throw s3Errors.malformedXml();
  return { mode, retainUntil: until };
}

/** A LegalHold document's status. */
export function legalHoldFromXml(body: string): boolean {
  const status = field(field(parseXml(body), 'LegalHold'), 'Status');
  if (status !== 'ON' && status !== 'OFF') throw s3Errors.malformedXml();
  return status === 'ON';
}

const invalidPeriod = () => new S3Error('InvalidRetentionPeriod', 400, 'Default retention period must be a positive integer value.');

/** An ObjectLockConfiguration document: its default retention (null: none). Days and years are whole numbers of at least 1, never both. */
export function lockConfigurationFromXml(body: string): { mode: RetentionMode; days: number | null; years: number | null } | null {
  const configuration = field(parseXml(body), 'ObjectLockConfiguration');
  if (configuration === undefined || field(configuration, 'ObjectLockEnabled') !== 'Enabled') throw s3Errors.malformedXml();
  const rule = field(configuration, 'Rule');
  if (rule === undefined) return null;
  const retention = field(rule, 'DefaultRetention');
  const mode = field(retention, 'Mode');
  if (!isRetentionMode(mode)) throw s3Errors.malformedXml();
  const days = field(retention, 'Days');
  const years = field(retention, 'Years');
  if ((days === undefined) === (years === undefined)) throw s3Errors.malformedXml();
  const whole = (value: unknown): number | null => {
    if (value === undefined) return null;
    if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) throw s3Errors.malformedXml();
    const n = Number(value);
    if (n < 1 || n > (days === undefined ? 100 : 36500)) throw invalidPeriod();
    return n;
  };
  return { mode, days: whole(days), years: whole(years) };
}

/** The ObjectLockConfiguration a bucket answers with. */
export function lockConfigurationXml(bucket: Pick<BucketRow, 'lock_default_mode' | 'lock_default_days' | 'lock_default_years'>): XmlElement {
  if (!isRetentionMode(bucket.lock_default_mode)) return { ObjectLockEnabled: 'Enabled' };
  const period = bucket.lock_default_years !== null ? { Years: bucket.lock_default_years } : { Days: bucket.lock_default_days ?? 0 };
  return { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: bucket.lock_default_mode, ...period } } };
}
