/**
 * The preconditions S3 answers 412 for on GET and HEAD (If-Match,
 * If-Unmodified-Since). The 304 ones (If-None-Match, If-Modified-Since) are
 * sendObject's, shared with the Pail API.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { WriteCondition } from '../db/object-writes/object-writes.js';
import type { ObjectRow } from '../db/schema.js';
import { S3Error, s3Errors } from './errors.js';

export const preconditionFailed = () => new S3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold');

/** Throws 412 PreconditionFailed when If-Match names another ETag, or (without If-Match) the object changed after If-Unmodified-Since. */
export function checkPreconditions(headers: IncomingHttpHeaders, object: ObjectRow): void {
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined) {
    const etag = `"${object.etag}"`;
    const matches = ifMatch.split(',').some((tag) => {
      const trimmed = tag.trim();
      // S3 accepts the ETag with or without its quotes.
      return trimmed === '*' || trimmed === etag || `"${trimmed}"` === etag;
    });
    if (!matches) throw preconditionFailed();
    return;
  }
  const ifUnmodifiedSince = headers['if-unmodified-since'];
  if (ifUnmodifiedSince !== undefined) {
    const since = Date.parse(ifUnmodifiedSince);
    // HTTP dates have whole seconds.
    const modified = Math.floor(Date.parse(object.updated_at) / 1000) * 1000;
    if (!Number.isNaN(since) && modified > since) throw preconditionFailed();
  }
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(',') : value);

/** Whether an If-Match style list (`"etag", etag, *`) names the object's ETag; S3 accepts ETags with or without quotes. */
const namesEtag = (list: string, object: ObjectRow): boolean => list.split(',').some((tag) => ['*', object.etag, `"${object.etag}"`].includes(tag.trim()));

/** Whether the object changed after an HTTP date (whole seconds); undefined for a date that does not parse (S3 then ignores it). */
function modifiedSince(date: string, object: ObjectRow): boolean | undefined {
  const since = Date.parse(date);
  return Number.isNaN(since) ? undefined : Math.floor(Date.parse(object.updated_at) / 1000) * 1000 > since;
}

/**
 * CopyObject's x-amz-copy-source-if-* on the source, as S3 combines them: a
 * matching if-match outweighs a failing if-unmodified-since, a failing
 * if-none-match outweighs if-modified-since; any that fails is 412.
 */
export function checkCopySourceConditions(headers: IncomingHttpHeaders, source: ObjectRow): void {
  const ifMatch = single(headers['x-amz-copy-source-if-match']);
  const ifNoneMatch = single(headers['x-amz-copy-source-if-none-match']);
  const ifModifiedSince = single(headers['x-amz-copy-source-if-modified-since']);
  const ifUnmodifiedSince = single(headers['x-amz-copy-source-if-unmodified-since']);
  if (ifMatch !== undefined) {
    if (!namesEtag(ifMatch, source)) throw preconditionFailed();
  } else if (ifUnmodifiedSince !== undefined && modifiedSince(ifUnmodifiedSince, source) === true) {
    throw preconditionFailed();
  }
  if (ifNoneMatch !== undefined) {
    if (namesEtag(ifNoneMatch, source)) throw preconditionFailed();
  } else if (ifModifiedSince !== undefined && modifiedSince(ifModifiedSince, source) === false) {
    throw preconditionFailed();
  }
}

/**
 * A write's own conditions (PutObject, CopyObject): If-None-Match: * (only
 * that, as S3) and If-Match with one or more ETags. The domain checks them
 * in the commit (db/object-writes/).
 */
export function writeConditionOf(headers: IncomingHttpHeaders): WriteCondition | undefined {
  const ifNoneMatch = single(headers['if-none-match'])?.trim();
  const ifMatch = single(headers['if-match']);
  if (ifNoneMatch === undefined && ifMatch === undefined) return undefined;
  if (ifNoneMatch !== undefined && ifNoneMatch !== '*') throw s3Errors.notImplemented(`If-None-Match: ${ifNoneMatch} on a write (only * is supported)`);
  const etagIn = ifMatch
    ?.split(',')
    .map((tag) => tag.trim().replace(/^"(.*)"$/, '$1'))
    .filter((tag) => tag !== '');
  return { ...(ifNoneMatch === '*' ? { absent: true } : {}), ...(etagIn ? { etagIn } : {}) };
}
