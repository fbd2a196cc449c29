/**
 * The preconditions S3 answers 412 for on GET and HEAD (If-Match,
 * If-Unmodified-Since). The 304 ones (If-None-Match, If-Modified-Since) are
 * sendObject's, shared with the Pail API.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ObjectRow } from '../db/schema.js';
import { S3Error } from './errors.js';

const preconditionFailed = () => new S3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold');

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
