/**
 * x-amz-expiration, as S3 sends it on PutObject, GetObject and HeadObject when a lifecycle Expiration rule reaches
 * the object: `expiry-date="Fri, 23 Dec 2012 00:00:00 GMT", rule-id="picture-deletion-rule"`. When is the domain's
 * (domain/lifecycle-expiry.ts); here only its shape.
 */
import { objectExpiry, type ObjectExpiry } from '../domain/lifecycle-expiry.js';
import type { LifecycleRule } from '../domain/lifecycle-rules.js';

const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** A rule id fit for a quoted header value: one with a quote, a backslash or a character outside printable ASCII is percent-encoded. */
const quotable = (id: string): string => (/^[\x20-\x7e]*$/.test(id) && !/["\\]/.test(id) ? id : encodeURIComponent(id));

export const expirationValue = (expiry: ObjectExpiry): string => `expiry-date="${expiry.date.toUTCString()}", rule-id="${quotable(expiry.ruleId)}"`;

/** The header for a current version (`rules`: the bucket's Expiration rules, null for none: no work at all). */
export function expirationHeader(
  rules: readonly LifecycleRule[] | null,
  file: { filename: string; size: number; tags: string | null; lastModified: string | number },
): Readonly<Record<string, string>> {
  const expiry = rules === null ? null : objectExpiry(rules, file);
  return expiry === null ? NONE : { 'x-amz-expiration': expirationValue(expiry) };
}
