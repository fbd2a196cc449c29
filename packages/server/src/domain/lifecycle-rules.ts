/**
 * A bucket's lifecycle rules (S3's LifecycleConfiguration), one model for
 * both doors: the S3 door parses its XML into it, the Pail API's JSON is it.
 * Here they are checked against S3's rules, once, and matched against files.
 * Transitions never get here: one storage class, so the doors answer 501.
 */
import { isUnfitText, type LifecycleRule, type LifecycleFilter } from '@pail/shared';
import { AppError } from './errors.js';
import { decodeTags, type Tag } from './object-tags.js';

export type { LifecycleRule, LifecycleFilter };

export const MAX_LIFECYCLE_RULES = 1000;
export const MAX_RULE_ID_LENGTH = 255;

/**
 * Which kind of mistake a configuration holds: S3 answers a shape it cannot
 * read (MalformedXML), a value out of range (InvalidArgument) and a
 * combination it refuses (InvalidRequest) differently; the Pail API answers
 * all three as a validation error.
 */
export type LifecycleMistake = 'shape' | 'argument' | 'request';

export class LifecycleRefusal extends AppError {
  constructor(
    readonly mistake: LifecycleMistake,
    message: string,
  ) {
    super('ValidationError', message);
  }
}

const refuse = (mistake: LifecycleMistake, message: string) => new LifecycleRefusal(mistake, message);
const wholeDays = (value: number | undefined) => value === undefined || (Number.isSafeInteger(value) && value >= 0);

/** A midnight UTC, as S3 accepts an Expiration Date (ISO 8601, at 00:00:00 UTC). */
export function parseRuleDate(text: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T00:00:00(?:\.0+)?(?:Z|[+-]00:?00)?)?$/.exec(text);
  if (!match) return null;
  const date = new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== `${match[1]}-${match[2]}-${match[3]}` ? null : date;
}

/** A new rule id where none was given, as S3 makes one (and GetBucketLifecycleConfiguration shows it). */
const generatedId = (index: number): string => `rule-${Date.now().toString(36)}-${index}`;

/**
 * Checks rules as S3 does and returns them as kept: ids filled in, dates
 * in their canonical form. Throws a LifecycleRefusal naming the first mistake.
 */
export function validateLifecycleRules(rules: readonly LifecycleRule[]): LifecycleRule[] {
  if (rules.length === 0) throw refuse('shape', 'A lifecycle configuration needs at least one Rule');
  if (rules.length > MAX_LIFECYCLE_RULES) throw refuse('argument', `A lifecycle configuration may have at most ${MAX_LIFECYCLE_RULES} rules`);
  const ids = new Set<string>();
  return rules.map((rule, index) => {
    const id = rule.id === undefined || rule.id === '' ? generatedId(index) : rule.id;
    if (id.length > MAX_RULE_ID_LENGTH) throw refuse('argument', `ID length should not exceed allowed limit of ${MAX_RULE_ID_LENGTH}`);
    if (ids.has(id)) throw refuse('argument', `Rule ID must be unique. Found same ID for more than one rule: ${id}`);
    ids.add(id);
    if (rule.status !== 'enabled' && rule.status !== 'disabled') throw refuse('shape', 'Status must be Enabled or Disabled');
    if (rule.prefix !== undefined && rule.filter !== undefined) throw refuse('shape', 'A rule has either a Prefix or a Filter, not both');
    // No filename holds a control character: such a prefix could match nothing, and PostgreSQL refuses a NUL outright.
    if (isUnfitText(rulePrefix(rule))) throw refuse('argument', 'A prefix must not contain control characters');
    checkFilter(rule);
    return { ...rule, id, ...(rule.expiration ? { expiration: checkedExpiration(rule) } : {}), ...checkedActions(rule) };
  });
}

function checkFilter(rule: LifecycleRule): void {
  const filter = rule.filter;
  if (filter === undefined) return;
  const { object_size_greater_than: above, object_size_less_than: below } = filter;
  for (const size of [above, below]) {
    if (size !== undefined && !(Number.isSafeInteger(size) && size >= 0))
      throw refuse('argument', 'An object size in a filter must be a whole number of bytes');
  }
  if (above !== undefined && below !== undefined && below <= above) {
    throw refuse('argument', 'ObjectSizeLessThan must be greater than ObjectSizeGreaterThan');
  }
  const keys = new Set<string>();
  for (const tag of filter.tags ?? []) {
    if (keys.has(tag.key)) throw refuse('argument', `Duplicate Tag Keys are not allowed: ${tag.key}`);
    keys.add(tag.key);
  }
  if ((filter.tags?.length ?? 0) > 0 && rule.abort_incomplete_multipart_upload !== undefined) {
    throw refuse('request', 'AbortIncompleteMultipartUpload cannot be specified with Tags.');
  }
  if ((filter.tags?.length ?? 0) > 0 && rule.expiration?.expired_object_delete_marker !== undefined) {
    throw refuse('request', 'ExpiredObjectDeleteMarker cannot be specified with Tags.');
  }
}

function checkedExpiration(rule: LifecycleRule): NonNullable<LifecycleRule['expiration']> {
  const expiration = rule.expiration!;
  const given = [expiration.days, expiration.date, expiration.expired_object_delete_marker].filter((value) => value !== undefined).length;
  if (given !== 1) throw refuse('shape', 'Expiration needs exactly one of Days, Date and ExpiredObjectDeleteMarker');
  if (expiration.days !== undefined && !(wholeDays(expiration.days) && expiration.days > 0)) {
    throw refuse('argument', "'Days' for Expiration action must be a positive integer");
  }
  if (expiration.date !== undefined) {
    const date = parseRuleDate(expiration.date);
    if (date === null) throw refuse('argument', "'Date' must be at midnight GMT (ISO 8601, e.g. 2030-01-01T00:00:00Z)");
    return { date: date.toISOString() };
  }
  return expiration;
}

function checkedActions(rule: LifecycleRule): Partial<LifecycleRule> {
  const noncurrent = rule.noncurrent_version_expiration;
  const abort = rule.abort_incomplete_multipart_upload;
  if (rule.expiration === undefined && noncurrent === undefined && abort === undefined) {
    throw refuse('shape', 'A rule needs at least one action');
  }
  if (noncurrent !== undefined) {
    if (!(wholeDays(noncurrent.noncurrent_days) && noncurrent.noncurrent_days > 0)) {
      throw refuse('argument', "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer");
    }
    const newer = noncurrent.newer_noncurrent_versions;
    if (newer !== undefined && !(Number.isSafeInteger(newer) && newer > 0 && newer <= 100)) {
      throw refuse('argument', "'NewerNoncurrentVersions' must be an integer from 1 to 100");
    }
  }
  if (abort !== undefined && !(wholeDays(abort.days_after_initiation) && abort.days_after_initiation > 0)) {
    throw refuse('argument', "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer");
  }
  return {};
}

/** The prefix a rule applies under ('' for every name): the legacy top-level Prefix, or the filter's. */
export const rulePrefix = (rule: LifecycleRule): string => rule.prefix ?? rule.filter?.prefix ?? '';

/** Whether a file's size and tags pass a rule's filter (its prefix is the query's to match). */
export function passesFilter(rule: LifecycleRule, file: { size: number; tags: string | null }): boolean {
  const filter = rule.filter;
  if (filter === undefined) return true;
  if (filter.object_size_greater_than !== undefined && !(file.size > filter.object_size_greater_than)) return false;
  if (filter.object_size_less_than !== undefined && !(file.size < filter.object_size_less_than)) return false;
  const wanted = filter.tags ?? [];
  if (wanted.length === 0) return true;
  const held: Tag[] = decodeTags(file.tags);
  return wanted.every((tag) => held.some((have) => have.key === tag.key && have.value === tag.value));
}
