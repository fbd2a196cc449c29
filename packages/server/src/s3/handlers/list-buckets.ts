/**
 * ListBuckets: the caller's buckets, those a key limited to some buckets may use, in name order as S3 lists them;
 * paged by `max-buckets` and `continuation-token`, filtered by `prefix` (ListBuckets' 2024 parameters).
 */
import { allows } from '../../domain/authorize.js';
import { listBuckets } from '../../domain/buckets.js';
import { s3Errors } from '../errors.js';
import { ownerXml, sendXml, type Handler } from '../handler-support.js';
import { queryValue } from '../query.js';

const MAX_BUCKETS = 10_000;

export const ListBuckets: Handler = async (ctx, _request, reply, { caller, query }) => {
  const { principal } = caller;
  const maxBuckets = pageSize(queryValue(query, 'max-buckets'));
  const prefix = queryValue(query, 'prefix') ?? '';
  const token = queryValue(query, 'continuation-token');
  // The token is the last name of the page before, opaque to the client.
  const after = token ? Buffer.from(token, 'base64url').toString('utf8') : '';
  const buckets = (await listBuckets(ctx.db, principal.user.id))
    .filter((bucket) => allows(principal, 'listBuckets', { id: bucket.id }) && bucket.name.startsWith(prefix) && bucket.name > after)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const page = maxBuckets === undefined ? buckets : buckets.slice(0, maxBuckets);
  const more = page.length < buckets.length;
  return sendXml(reply, 'ListAllMyBucketsResult', {
    Owner: ownerXml(caller),
    Buckets: { Bucket: page.map((bucket) => ({ Name: bucket.name, CreationDate: bucket.created_at })) },
    ...(more ? { ContinuationToken: Buffer.from(page.at(-1)!.name, 'utf8').toString('base64url') } : {}),
    ...(prefix !== '' ? { Prefix: prefix } : {}),
  });
};

function pageSize(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const size = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(size >= 1 && size <= MAX_BUCKETS)) throw s3Errors.invalidArgument(`max-buckets must be a number from 1 to ${MAX_BUCKETS}`);
  return size;
}
