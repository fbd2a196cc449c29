/** What the bucket calls take besides the bucket: its visibility and its own limits. */
import type { RetentionMode } from '@pail/shared';
import type { CallOptions } from './call-options.js';

export type Visibility = 'public' | 'private';

/** A bucket's own limits (decisions.md, "Per-bucket limits"); `null` clears one. */
export interface BucketLimits {
  /** The largest file the bucket accepts, in bytes. */
  max_file_bytes?: number | null | undefined;
  /** The MIME types (or `type/*` patterns) it accepts, checked against the file's bytes too. */
  allowed_types?: string[] | null | undefined;
}

/** Object lock, chosen when a bucket is made and for good (decisions.md, "Object lock"). */
export interface BucketLockOptions {
  /** Versioned for good; its versions may carry a retention and a legal hold. */
  object_lock?: boolean | undefined;
  /** With object_lock: the retention every new version gets, in days or years. */
  default_retention?: { mode: RetentionMode; days?: number | null; years?: number | null } | null | undefined;
}

export type CreateBucketOptions = CallOptions & BucketLimits & BucketLockOptions & ({ public?: boolean } | { visibility?: Visibility });
