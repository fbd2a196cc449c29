/**
 * A bucket's lifecycle rules (`PUT/GET/DELETE …/buckets/:id/lifecycle`): S3's
 * LifecycleConfiguration as JSON. The calls live here, beside the client
 * class that exposes them, so the rules' shape and requests stay in one file.
 */
import type { LifecycleRule } from '@pail/shared';
import type { BucketId, CallOptions } from './call-options.js';
import { NotFoundError } from './errors.js';
import { bucketSegment } from './request-paths.js';
import type { Transport } from './transport.js';

export type { LifecycleFilter, LifecycleRule } from '@pail/shared';

const lifecyclePath = (id: BucketId) => `/${bucketSegment(id)}/lifecycle`;

/** The bucket's rules, or null when it has none. */
export async function getLifecycle(transport: Transport, id: BucketId, options: CallOptions): Promise<LifecycleRule[] | null> {
  try {
    const body = await transport.json<{ data: { rules: LifecycleRule[] } }>({ method: 'GET', path: lifecyclePath(id), ...options });
    return body.data.rules;
  } catch (error) {
    // A bucket that is not there is BucketNotFoundError, a subclass: only "no rules" is null.
    if (error instanceof NotFoundError && error.constructor === NotFoundError) return null;
    throw error;
  }
}

/** Replaces the bucket's rules whole; returns them as kept (ids filled in, dates in full). */
export async function setLifecycle(transport: Transport, id: BucketId, rules: LifecycleRule[], options: CallOptions): Promise<LifecycleRule[]> {
  const body = await transport.json<{ data: { rules: LifecycleRule[] } }>({ method: 'PUT', path: lifecyclePath(id), json: { rules }, ...options });
  return body.data.rules;
}

export async function deleteLifecycle(transport: Transport, id: BucketId, options: CallOptions): Promise<void> {
  await transport.json({ method: 'DELETE', path: lifecyclePath(id), ...options });
}
