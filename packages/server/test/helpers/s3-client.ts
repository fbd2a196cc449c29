import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';

export interface S3Key {
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * An AWS SDK client for a test server's S3 listener, set as the tests use it:
 * path-style addressing (no bucket subdomains on 127.0.0.1) and one attempt,
 * so a failure shows instead of being retried. `key` may be a TestUser: only
 * its two S3 fields are taken. `options` change the rest (checksums, region).
 */
export function sdkClient(endpoint: string, key: S3Key, options: Omit<S3ClientConfig, 'endpoint' | 'credentials'> = {}): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    maxAttempts: 1,
    ...options,
  });
}
