/** The paths, under the Developer API's root (`/api/v1/buckets`), of a bucket and of a file in it. */
import type { BucketId } from './call-options.js';
import { BucketNotFoundError } from './errors.js';
import { encodeFilename, encodeFilenameBeforeWord } from './file-paths.js';

/**
 * Names a URL cannot carry as a path segment (`''`, `.`, `..`: URL parsing
 * would drop or resolve them and the request would reach another route) are
 * refused here with the error the server gives for such names.
 */
export function bucketSegment(id: BucketId): string {
  const text = String(id);
  if (text === '' || text === '.' || text === '..') throw new BucketNotFoundError('Bucket not found', { status: 404, code: 'BucketNotFound' });
  return encodeURIComponent(text);
}

/** `/<bucket>/files/<filename>`, the filename's folders kept as slashes (file-paths.ts). */
export function filePath(id: BucketId, filename: string): string {
  return `/${bucketSegment(id)}/files/${encodeFilename(filename)}`;
}

/** `/<bucket>/files/<filename>/<word>`: an operation on the file (its tags, versions, a restore). */
export function fileOperationPath(id: BucketId, filename: string, word: 'tags' | 'versions' | 'restore'): string {
  return `/${bucketSegment(id)}/files/${encodeFilenameBeforeWord(filename)}/${word}`;
}
