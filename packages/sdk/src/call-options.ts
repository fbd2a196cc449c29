/** Types every part of the client shares (their own file, so the parts need not import client.ts). */

/** A bucket id: the number the API returns (a numeric string works too). */
export type BucketId = number | string;

/** Options every call accepts. */
export interface CallOptions {
  /** Cancels the request (and any wait before a retry). */
  signal?: AbortSignal | undefined;
}
