/** How the AWS SDK's errors say what went wrong, whichever S3-compatible server sent them. */

export function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

export function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** The key (not the bucket) does not exist. */
export function isMissingKey(error: unknown): boolean {
  const name = errorName(error);
  if (name === 'NoSuchKey') return true;
  return httpStatus(error) === 404 && name !== 'NoSuchBucket';
}
