/**
 * S3 errors: a code, a status and a message, sent as S3's XML error body
 * (xml.ts). The domain's refusals (AppError) become the S3 error a client
 * expects for them, keeping the domain's message.
 */
import type { ErrorCode } from '@pail/shared';
import type { AppError } from '../domain/errors.js';
import { shownVersionId } from '../domain/version-ids.js';
import { DeleteMarkerNamed } from '../domain/version-lookup.js';

export class S3Error extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Elements S3 adds to this error's body after Message (HeadersNotSigned). */
    readonly details: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'S3Error';
  }
}

export const s3Errors = {
  accessDenied: (message = 'Access Denied') => new S3Error('AccessDenied', 403, message),
  invalidUri: () => new S3Error('InvalidURI', 400, "Couldn't parse the specified URI."),
  invalidAccessKeyId: () => new S3Error('InvalidAccessKeyId', 403, 'The AWS Access Key Id you provided does not exist in our records.'),
  signatureDoesNotMatch: () =>
    new S3Error(
      'SignatureDoesNotMatch',
      403,
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    ),
  timeTooSkewed: () => new S3Error('RequestTimeTooSkewed', 403, 'The difference between the request time and the current time is too large.'),
  expired: () => new S3Error('AccessDenied', 403, 'Request has expired'),
  notYetValid: () => new S3Error('AccessDenied', 403, 'Request is not yet valid'),
  headersNotSigned: (names: string[]) =>
    new S3Error('AccessDenied', 403, 'There were headers present in the request which were not signed', {}, { HeadersNotSigned: names.join(', ') }),
  malformedAuth: (why: string) => new S3Error('AuthorizationHeaderMalformed', 403, `The authorization header is malformed: ${why}`),
  malformedQueryAuth: (why: string) => new S3Error('AuthorizationQueryParametersError', 403, why),
  missingAuth: () => new S3Error('AccessDenied', 403, 'Access Denied: the request is not signed (only signed requests are served)'),
  onlySigV4: () =>
    new S3Error(
      'InvalidRequest',
      400,
      'Only Signature Version 4 (AWS4-HMAC-SHA256) is supported; configure your client to use SigV4 (signature_version = s3v4)',
    ),
  notImplemented: (what: string) => new S3Error('NotImplemented', 501, `${what} is not implemented by Pail yet`),
  aclNotSupported: (why: string) => new S3Error('AccessControlListNotSupported', 400, `The bucket does not allow ACLs: ${why}`),
  noSuchBucket: () => new S3Error('NoSuchBucket', 404, 'The specified bucket does not exist'),
  noSuchKey: () => new S3Error('NoSuchKey', 404, 'The specified key does not exist.'),
  bucketNotEmpty: () => new S3Error('BucketNotEmpty', 409, 'The bucket you tried to delete is not empty'),
  contentSha256Mismatch: () => new S3Error('XAmzContentSHA256Mismatch', 400, "The provided 'x-amz-content-sha256' header does not match what was computed."),
  malformedXml: () => new S3Error('MalformedXML', 400, 'The XML you provided was not well-formed'),
  bodyTooLarge: () => new S3Error('MaxMessageLengthExceeded', 400, 'Your request was too big.'),
  invalidArgument: (message: string) => new S3Error('InvalidArgument', 400, message),
  invalidRequest: (message: string) => new S3Error('InvalidRequest', 400, message),
  missingContentLength: () => new S3Error('MissingContentLength', 411, 'You must provide the Content-Length HTTP header.'),
  internal: () => new S3Error('InternalError', 500, 'We encountered an internal error. Please try again.'),
};

/** The S3 code and status for each domain refusal; the domain's message is kept. */
const FROM_DOMAIN: Record<ErrorCode, { code: string; status: number }> = {
  ValidationError: { code: 'InvalidArgument', status: 400 },
  Unauthorized: { code: 'AccessDenied', status: 403 },
  Forbidden: { code: 'AccessDenied', status: 403 },
  // S3 refuses removing a locked version with 403 AccessDenied; Pail's message says what holds it and until when.
  ObjectLocked: { code: 'AccessDenied', status: 403 },
  InvalidBucketState: { code: 'InvalidBucketState', status: 409 },
  SignupClosed: { code: 'AccessDenied', status: 403 },
  NotFound: { code: 'NoSuchKey', status: 404 },
  BucketNotFound: { code: 'NoSuchBucket', status: 404 },
  FileNotFound: { code: 'NoSuchKey', status: 404 },
  VersionNotFound: { code: 'NoSuchVersion', status: 404 },
  ApiKeyNotFound: { code: 'InvalidAccessKeyId', status: 403 },
  BucketNameTaken: { code: 'BucketAlreadyOwnedByYou', status: 409 },
  EmailTaken: { code: 'InvalidArgument', status: 409 },
  // S3 has no storage cap of its own; 403 QuotaExceeded is what Ceph RGW answers, and clients do not retry a 4xx.
  StorageLimitExceeded: { code: 'QuotaExceeded', status: 403 },
  OffsetMismatch: { code: 'InvalidRequest', status: 409 },
  // No S3 operation moves files; a name taken is what a failed If-None-Match: * says.
  FileExists: { code: 'PreconditionFailed', status: 412 },
  // S3 answers both with a 400; SDKs retry RequestTimeout as a transient error.
  RequestTimeout: { code: 'RequestTimeout', status: 400 },
  HeadersTooLarge: { code: 'RequestHeaderSectionTooLarge', status: 400 },
  PayloadTooLarge: { code: 'EntityTooLarge', status: 400 },
  UnsupportedMediaType: { code: 'InvalidArgument', status: 400 },
  RangeNotSatisfiable: { code: 'InvalidRange', status: 416 },
  // S3's throttling answer: clients back off and retry on 503 SlowDown.
  RateLimited: { code: 'SlowDown', status: 503 },
  InternalError: { code: 'InternalError', status: 500 },
  ServiceUnavailable: { code: 'ServiceUnavailable', status: 503 },
  SlowDown: { code: 'SlowDown', status: 503 },
  InsufficientStorage: { code: 'InsufficientStorage', status: 507 },
};

export function fromAppError(error: AppError): S3Error {
  // A delete marker has no tags or ACL to read or set: S3's 405, saying which marker it was.
  if (error instanceof DeleteMarkerNamed) {
    return new S3Error('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.', {
      'x-amz-delete-marker': 'true',
      'x-amz-version-id': shownVersionId(error.marker.versionId),
    });
  }
  const { code, status } = FROM_DOMAIN[error.code];
  return new S3Error(code, status, error.message, error.headers);
}
