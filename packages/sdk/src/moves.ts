/**
 * Options for moving files and folders, and how they become the JSON body of
 * `POST …/buckets/:id/move`.
 */
import type { BucketId, CallOptions } from './call-options.js';

export interface MoveOptions extends CallOptions {
  /** Another of your buckets to move into (its id); absent: the same bucket. */
  toBucket?: BucketId | undefined;
  /** Replace files already at the new names. Absent or false: a name taken throws FileExistsError and nothing moves. */
  overwrite?: boolean | undefined;
}

export function moveBody(from: string, to: string, options: MoveOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { from, to };
  // The API takes the target's id as a number; a numeric string (a BucketId) is the same id.
  if (options.toBucket !== undefined) body.to_bucket_id = Number(options.toBucket);
  if (options.overwrite !== undefined) body.overwrite = options.overwrite;
  return body;
}

/** A folder's name as the API takes it: ending in `/`. */
export const folderName = (name: string): string => (name.endsWith('/') ? name : `${name}/`);
