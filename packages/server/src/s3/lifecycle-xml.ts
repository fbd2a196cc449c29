/**
 * S3's LifecycleConfiguration document, in and out, translated to the one
 * rule model (domain/lifecycle-rules.ts) the Pail API's JSON is. What the XML
 * cannot say is MalformedXML here; what the values may not be is the
 * domain's, whose refusals become S3's codes in `lifecycleError`.
 */
import { parseRuleDate, type LifecycleFilter, type LifecycleRefusal, type LifecycleRule } from '../domain/lifecycle-rules.js';
import { S3Error, s3Errors } from './errors.js';
import type { XmlBodyLimits } from './payload.js';
import { asList, field, parseXml, type XmlElement } from './xml.js';

/** Room for S3's 1000 rules, each with a filter of a few tags. */
export const LIFECYCLE_XML_BODY: XmlBodyLimits = { maxBytes: 1024 * 1024, maxTags: 60_000 };

const malformed = () => s3Errors.malformedXml();

/** A child element's text, or undefined when absent; an element where text belongs is malformed. */
function text(parent: unknown, name: string): string | undefined {
  const value = field(parent, name);
  if (value === undefined) return undefined;
  if (Array.isArray(value) || typeof value !== 'string') throw malformed();
  return value;
}

function integer(parent: unknown, name: string): number | undefined {
  const value = text(parent, name);
  if (value === undefined) return undefined;
  if (!/^-?\d{1,15}$/.test(value)) throw malformed();
  return Number(value);
}

/** An element that may be empty (`<Filter/>` parses as ''): its children, or {} for none. */
function element(parent: unknown, name: string): Record<string, unknown> | undefined {
  const value = field(parent, name);
  if (value === undefined) return undefined;
  if (value === '') return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed();
  return value as Record<string, unknown>;
}

const tagsOf = (parent: unknown) =>
  asList(field(parent, 'Tag')).map((tag) => {
    const key = text(tag, 'Key');
    if (key === undefined) throw malformed();
    return { key, value: text(tag, 'Value') ?? '' };
  });

/**
 * Filter: one condition, or several inside And. As Ceph (and s3-tests) do,
 * conditions beside And, or several without it, are read as all of them:
 * every tag, each size bound, and the longest prefix (the others must begin it).
 */
function filterOf(xml: Record<string, unknown>): LifecycleFilter {
  const and = element(xml, 'And');
  const sources = and === undefined ? [xml] : [xml, and];
  const prefixes = sources.map((source) => text(source, 'Prefix')).filter((prefix) => prefix !== undefined);
  const prefix = prefixes.sort((a, b) => b.length - a.length)[0];
  if (prefix !== undefined && !prefixes.every((other) => prefix.startsWith(other))) throw malformed();
  const tags = sources.flatMap(tagsOf);
  const bound = (name: string) => {
    const values = sources.map((source) => integer(source, name)).filter((value) => value !== undefined);
    if (new Set(values).size > 1) throw malformed();
    return values[0];
  };
  const above = bound('ObjectSizeGreaterThan');
  const below = bound('ObjectSizeLessThan');
  return {
    ...(prefix !== undefined ? { prefix } : {}),
    ...(tags.length > 0 ? { tags } : {}),
    ...(above !== undefined ? { object_size_greater_than: above } : {}),
    ...(below !== undefined ? { object_size_less_than: below } : {}),
  };
}

function statusOf(rule: unknown): LifecycleRule['status'] {
  const status = text(rule, 'Status');
  if (status === 'Enabled') return 'enabled';
  if (status === 'Disabled') return 'disabled';
  throw malformed();
}

function expirationOf(xml: Record<string, unknown>): NonNullable<LifecycleRule['expiration']> {
  const days = integer(xml, 'Days');
  const date = text(xml, 'Date');
  const marker = text(xml, 'ExpiredObjectDeleteMarker');
  if (marker !== undefined && marker !== 'true' && marker !== 'false') throw malformed();
  return {
    ...(days !== undefined ? { days } : {}),
    ...(date !== undefined ? { date } : {}),
    ...(marker !== undefined ? { expired_object_delete_marker: marker === 'true' } : {}),
  };
}

function ruleOf(rule: unknown): LifecycleRule {
  if (typeof rule !== 'object' || rule === null) throw malformed();
  const transitions = [...asList(field(rule, 'Transition')), ...asList(field(rule, 'NoncurrentVersionTransition'))];
  if (transitions.length > 0) {
    // A date S3 would refuse is refused first, as S3 does; any transition is then one storage class too many.
    const date = transitions.map((transition) => field(transition, 'Date')).find((value) => value !== undefined);
    if (date !== undefined && (typeof date !== 'string' || parseRuleDate(date) === null)) throw s3Errors.invalidArgument("'Date' must be at midnight GMT");
    throw s3Errors.notImplemented('Transition (Pail has one storage class)');
  }
  const id = text(rule, 'ID');
  const prefix = text(rule, 'Prefix');
  const filter = element(rule, 'Filter');
  const expiration = element(rule, 'Expiration');
  const noncurrent = element(rule, 'NoncurrentVersionExpiration');
  const abort = element(rule, 'AbortIncompleteMultipartUpload');
  const noncurrentDays = noncurrent && integer(noncurrent, 'NoncurrentDays');
  const newer = noncurrent && integer(noncurrent, 'NewerNoncurrentVersions');
  const initiation = abort && integer(abort, 'DaysAfterInitiation');
  if ((noncurrent && noncurrentDays === undefined) || (abort && initiation === undefined)) throw malformed();
  return {
    ...(id !== undefined ? { id } : {}),
    status: statusOf(rule),
    ...(prefix !== undefined ? { prefix } : {}),
    ...(filter !== undefined ? { filter: filterOf(filter) } : {}),
    ...(expiration !== undefined ? { expiration: expirationOf(expiration) } : {}),
    ...(noncurrentDays !== undefined
      ? { noncurrent_version_expiration: { noncurrent_days: noncurrentDays, ...(newer !== undefined ? { newer_noncurrent_versions: newer } : {}) } }
      : {}),
    ...(initiation !== undefined ? { abort_incomplete_multipart_upload: { days_after_initiation: initiation } } : {}),
  };
}

/** The rules of a LifecycleConfiguration document; MalformedXML when it is not one. */
export function rulesFromXml(body: string): LifecycleRule[] {
  const configuration = field(parseXml(body), 'LifecycleConfiguration');
  if (configuration === undefined || typeof configuration !== 'object' || configuration === null) throw malformed();
  const rules = asList(field(configuration, 'Rule'));
  if (rules.length === 0) throw malformed();
  return rules.map(ruleOf);
}

function filterXml(filter: LifecycleFilter): XmlElement {
  const conditions: XmlElement = {
    ...(filter.prefix !== undefined ? { Prefix: filter.prefix } : {}),
    ...(filter.tags !== undefined && filter.tags.length > 0 ? { Tag: filter.tags.map(({ key, value }) => ({ Key: key, Value: value })) } : {}),
    ...(filter.object_size_greater_than !== undefined ? { ObjectSizeGreaterThan: filter.object_size_greater_than } : {}),
    ...(filter.object_size_less_than !== undefined ? { ObjectSizeLessThan: filter.object_size_less_than } : {}),
  };
  const count = Object.keys(conditions).length + Math.max(0, (filter.tags?.length ?? 0) - 1);
  return count > 1 ? { And: conditions } : conditions;
}

/** A kept rule as S3 shows it: the elements it was given, the legacy Prefix where it had one. */
export function ruleXml(rule: LifecycleRule): XmlElement {
  const { expiration, noncurrent_version_expiration: noncurrent, abort_incomplete_multipart_upload: abort } = rule;
  return {
    ...(rule.id !== undefined ? { ID: rule.id } : {}),
    ...(rule.prefix !== undefined ? { Prefix: rule.prefix } : {}),
    ...(rule.filter !== undefined ? { Filter: filterXml(rule.filter) } : {}),
    Status: rule.status === 'enabled' ? 'Enabled' : 'Disabled',
    ...(expiration !== undefined
      ? {
          Expiration: {
            ...(expiration.days !== undefined ? { Days: expiration.days } : {}),
            ...(expiration.date !== undefined ? { Date: expiration.date } : {}),
            ...(expiration.expired_object_delete_marker !== undefined ? { ExpiredObjectDeleteMarker: expiration.expired_object_delete_marker } : {}),
          },
        }
      : {}),
    ...(noncurrent !== undefined
      ? {
          NoncurrentVersionExpiration: {
            NoncurrentDays: noncurrent.noncurrent_days,
            ...(noncurrent.newer_noncurrent_versions !== undefined ? { NewerNoncurrentVersions: noncurrent.newer_noncurrent_versions } : {}),
          },
        }
      : {}),
    ...(abort !== undefined ? { AbortIncompleteMultipartUpload: { DaysAfterInitiation: abort.days_after_initiation } } : {}),
  };
}

/** The domain's refusal of a configuration as S3 words it: MalformedXML, InvalidArgument or InvalidRequest. */
export function lifecycleError(refusal: LifecycleRefusal): S3Error {
  if (refusal.mistake === 'shape') return new S3Error('MalformedXML', 400, refusal.message);
  return new S3Error(refusal.mistake === 'argument' ? 'InvalidArgument' : 'InvalidRequest', 400, refusal.message);
}
