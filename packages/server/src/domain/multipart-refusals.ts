/**
 * The refusals of S3 multipart uploads. They are S3's own notions, so they
 * are a class of their own that the S3 door answers (s3/multipart-support.ts);
 * uploads.ts raises NoSuchUpload too, when a completion's commit finds the
 * upload already ended.
 */
export type MultipartRefusal =
  | 'no-upload'
  | 'invalid-part'
  | 'invalid-part-order'
  | 'too-small'
  | 'invalid-part-number'
  /** A part listed without the checksum its upload keeps. */
  | 'missing-part-checksum'
  /** The object's checksum the completion stated is not the one its bytes have. */
  | 'bad-digest';

export class MultipartRefused extends Error {
  constructor(
    readonly refusal: MultipartRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'MultipartRefused';
  }
}

export const noSuchUpload = () =>
  new MultipartRefused(
    'no-upload',
    'The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
  );
