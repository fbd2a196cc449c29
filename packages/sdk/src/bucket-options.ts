/** What the bucket calls take besides the bucket: its visibility and its own limits. */
import type { CallOptions } from './call-options.js';

export type Visibility = 'public' | 'private';

/** A bucket's own limits (decisions.md, "Per-bucket limits"); `null` clears one. */
export interface BucketLimits {
  /** The largest file the bucket accepts, in bytes. */
  max_file_bytes?: number | null | undefined;
  /** The MIME types (or `type/*` patterns) it accepts, checked against the file's bytes too. */
  allowed_types?: string[] | null | undefined;
}

export type CreateBucketOptions = CallOptions & BucketLimits & ({ public?: boolean } | { visibility?: Visibility });
