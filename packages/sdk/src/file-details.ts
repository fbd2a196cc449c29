/**
 * A file's details and their edit, and zips of folders and selections: the
 * requests, with the paths and bodies the server takes.
 */
import type { EditFile, ZipSelection } from '@pail/shared';
import type { BucketId, CallOptions } from './call-options.js';
import { encodeFilename } from './file-paths.js';
import { bucketSegment, filePath } from './request-paths.js';
import type { RequestSpec } from './transport.js';

/**
 * What to change: `metadata` replaces the user metadata whole (`{}` clears
 * it); `contentType` and each header set it, `null` clears a header, a field
 * left out stays as it is.
 */
export interface FileEdit {
  metadata?: Record<string, string>;
  contentType?: string;
  cacheControl?: string | null;
  contentDisposition?: string | null;
  contentEncoding?: string | null;
  contentLanguage?: string | null;
  expires?: string | null;
}

/**
 * What to zip: `prefix` alone is a folder (absent or '': the whole bucket);
 * with `filenames` and/or `folders` it is a selection in that folder. Entries
 * are named relative to `prefix`.
 */
export interface ZipOptions extends CallOptions {
  prefix?: string;
  filenames?: string[];
  folders?: string[];
}

export const detailsPath = (id: BucketId, filename: string): string => `/${bucketSegment(id)}/details/${encodeFilename(filename)}`;

export function editRequest(id: BucketId, filename: string, edit: FileEdit, options: CallOptions): RequestSpec {
  const body: EditFile = {};
  if (edit.metadata !== undefined) body.metadata = edit.metadata;
  if (edit.contentType !== undefined) body.content_type = edit.contentType;
  if (edit.cacheControl !== undefined) body.cache_control = edit.cacheControl;
  if (edit.contentDisposition !== undefined) body.content_disposition = edit.contentDisposition;
  if (edit.contentEncoding !== undefined) body.content_encoding = edit.contentEncoding;
  if (edit.contentLanguage !== undefined) body.content_language = edit.contentLanguage;
  if (edit.expires !== undefined) body.expires = edit.expires;
  return { method: 'PATCH', path: filePath(id, filename), json: body, ...options };
}

/** A folder is a GET (`?prefix=`); a selection a POST, so a long list fits. */
export function zipRequest(id: BucketId, options: ZipOptions): RequestSpec {
  const { prefix, filenames, folders, signal } = options;
  const path = `/${bucketSegment(id)}/zip`;
  if (filenames === undefined && folders === undefined) return { method: 'GET', path, query: { prefix }, signal };
  const selection: ZipSelection = { ...(prefix === undefined ? {} : { prefix }), filenames: filenames ?? [], folders: folders ?? [] };
  return { method: 'POST', path, json: selection, signal };
}
