/**
 * What the multipart handlers share: the domain's multipart refusals
 * answered as S3's errors, the upload a request names, and the page size
 * and key encoding of the two multipart listings (ListParts,
 * ListMultipartUploads), which encode keys as the object listings do.
 */
import { MultipartRefused, type MultipartRefusal } from '../domain/multipart-refusals.js';
import { S3Error, s3Errors } from './errors.js';
import type { Handler, S3Target } from './handler-support.js';
import { queryValue, strictEncode } from './query.js';

const S3_CODES: Record<MultipartRefusal, string> = {
  'no-upload': 'NoSuchUpload',
  'invalid-part': 'InvalidPart',
  'invalid-part-order': 'InvalidPartOrder',
  'too-small': 'EntityTooSmall',
  'invalid-part-number': 'InvalidArgument',
  'missing-part-checksum': 'InvalidRequest',
  'bad-digest': 'BadDigest',
};

/** The handler, its multipart refusals answered as S3's errors (NoSuchUpload is a 404, the rest 400). */
export function answeringRefusals(handler: Handler): Handler {
  return async (ctx, request, reply, target) => {
    try {
      return await handler(ctx, request, reply, target);
    } catch (error) {
      if (error instanceof MultipartRefused) throw new S3Error(S3_CODES[error.refusal], error.refusal === 'no-upload' ? 404 : 400, error.message);
      throw error;
    }
  };
}

export const uploadIdOf = (target: S3Target): string => queryValue(target.query, 'uploadId') ?? '';

const MAX_PAGE = 1000;

export function pageSize(target: S3Target, name: string): number {
  const raw = queryValue(target.query, name) ?? String(MAX_PAGE);
  if (!/^\d{1,9}$/.test(raw)) throw s3Errors.invalidArgument(`${name} must be a whole number`);
  // S3 answers at most 1000 a page whatever is asked for.
  return Math.min(Number(raw), MAX_PAGE);
}

export function encoderOf(target: S3Target): { encodingType?: string; encode: (text: string) => string } {
  const encodingType = queryValue(target.query, 'encoding-type') || undefined;
  if (encodingType === undefined) return { encode: (text) => text };
  if (encodingType !== 'url') throw s3Errors.invalidArgument('Invalid Encoding Method specified in Request');
  return { encodingType, encode: (text) => text.split('/').map(strictEncode).join('/') };
}
