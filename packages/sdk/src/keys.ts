/**
 * Options for creating an API key with limits, and how they become the JSON
 * body of `POST /api/keys` (decisions.md, "API keys with limits").
 */
import type { BucketId, CallOptions } from './call-options.js';
import type { Permission } from './types.js';

export interface CreateKeyOptions extends CallOptions {
  /** A name to recognise the key by (default "API key"). */
  name?: string | undefined;
  /** The only buckets the key may use (at least one, each a live bucket of yours). Default: every bucket, also future ones. */
  buckets?: BucketId[] | undefined;
  /** What the key may do: a non-empty subset of `read`, `write`, `delete`, `manage`. Default: all four. */
  permissions?: Permission[] | undefined;
  /** When the key stops working (in the future). Give this or `expiresIn`, not both. Default: never. */
  expiresAt?: Date | string | undefined;
  /** Seconds from now until the key stops working, a whole number from 1. */
  expiresIn?: number | undefined;
}

/** The body the server expects; options left out are left out, so the server's defaults apply. */
export function createKeyBody(options: CreateKeyOptions): Record<string, unknown> {
  const { name, buckets, permissions, expiresAt, expiresIn } = options;
  const body: Record<string, unknown> = {};
  if (name !== undefined) body.name = name;
  // A numeric string is a bucket id everywhere else in the SDK; the body wants numbers.
  if (buckets !== undefined) body.buckets = buckets.map((id) => (typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id));
  if (permissions !== undefined) body.permissions = permissions;
  if (expiresAt !== undefined) body.expires_at = expiresAt instanceof Date ? expiresAt.toISOString() : expiresAt;
  if (expiresIn !== undefined) body.expires_in = expiresIn;
  return body;
}
