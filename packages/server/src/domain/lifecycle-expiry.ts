/**
 * When a lifecycle Expiration rule will expire a file, as S3 tells it on
 * PutObject, GetObject and HeadObject (x-amz-expiration): the rule's Date, or
 * the file's last write plus the rule's Days rounded up to the next midnight
 * UTC (S3's rounding). Only a bucket with rules pays anything: its rules come
 * with the bucket's row (a join on reads, the cached bucket rules on writes),
 * and a bucket without them is null here.
 */
import { passesFilter, rulePrefix, type LifecycleRule } from './lifecycle-rules.js';

export interface ObjectExpiry {
  /** A midnight UTC. */
  date: Date;
  ruleId: string;
}

/** A calendar day: S3's Days are days of the calendar whatever LIFECYCLE_DAY_SECONDS says, as s3-tests expect of the header. */
const DAY_MS = 86_400_000;

/** Parsed rule sets by their JSON text: many reads of one bucket parse its rules once. */
const parsed = new Map<string, LifecycleRule[] | null>();
const PARSED_MAX = 1000;

/**
 * The enabled rules of a bucket's lifecycle configuration (its JSON, as kept) that expire current files by Days or
 * Date; null when there are none, so a read skips the rest.
 */
export function expirationRules(json: string | null): LifecycleRule[] | null {
  if (json === null) return null;
  let rules = parsed.get(json);
  if (rules === undefined) {
    const expiring = (JSON.parse(json) as LifecycleRule[]).filter(
      (rule) => rule.status === 'enabled' && (rule.expiration?.days !== undefined || rule.expiration?.date !== undefined),
    );
    rules = expiring.length === 0 ? null : expiring;
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(json, rules);
  }
  return rules;
}

/** When the rule expires a file written at `writtenMs`; null when it has no Days or Date. */
function expiryOf(rule: LifecycleRule, writtenMs: number): number | null {
  const { days, date } = rule.expiration ?? {};
  // The next midnight after the write plus its days: a file written at 10:30 on the 1st, with 1 day, expires at 00:00 on the 3rd.
  if (days !== undefined) return (Math.floor(writtenMs / DAY_MS) + days + 1) * DAY_MS;
  if (date !== undefined) return Date.parse(date);
  return null;
}

/**
 * Before when a current file must have been written for an Expiration of `days` to have reached it by `nowMs`,
 * so the sweep deletes a file when the header said it would: the inverse of the rounding above
 * (floor(w / day) + days + 1 <= now / day holds exactly for w < (floor(now / day) - days) days). A test day
 * (LIFECYCLE_DAY_SECONDS, as Ceph's rgw_lc_debug_interval) is not rounded: the days are simply that long.
 */
export function expiringWrittenBefore(days: number, nowMs: number, daySeconds: number): number {
  if (daySeconds * 1000 !== DAY_MS) return nowMs - days * daySeconds * 1000;
  return (Math.floor(nowMs / DAY_MS) - days) * DAY_MS;
}

/** The earliest expiry among the rules that reach this file (its name, size and tags), with that rule's id; null when none does. */
export function objectExpiry(
  rules: readonly LifecycleRule[] | null,
  file: { filename: string; size: number; tags: string | null; lastModified: string | number },
): ObjectExpiry | null {
  if (rules === null) return null;
  const writtenMs = typeof file.lastModified === 'number' ? file.lastModified : Date.parse(file.lastModified);
  let earliest: { at: number; ruleId: string } | null = null;
  for (const rule of rules) {
    if (!file.filename.startsWith(rulePrefix(rule)) || !passesFilter(rule, file)) continue;
    const at = expiryOf(rule, writtenMs);
    if (at !== null && (earliest === null || at < earliest.at)) earliest = { at, ruleId: rule.id ?? '' };
  }
  return earliest === null ? null : { date: new Date(earliest.at), ruleId: earliest.ruleId };
}
