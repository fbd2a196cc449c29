/**
 * The AWS SDK client the S3 blob store sends with, set up to work with S3's
 * look-alikes (MinIO, Ceph, s3rver) as well as with AWS itself.
 */
import { createHash } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';

export interface S3ClientSettings {
  endpoint?: string | undefined;
  region: string;
  forcePathStyle: boolean;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
}

export function createS3Client(settings: S3ClientSettings): S3Client {
  const client = new S3Client({
    endpoint: settings.endpoint || undefined,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials:
      settings.accessKeyId && settings.secretAccessKey ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } : undefined,
    // Recent SDKs add CRC32 checksum headers (and aws-chunked trailers for
    // streams) to every request by default; many S3-compatible servers
    // (s3rver, older MinIO, Ceph) reject or mis-store those. We hash the
    // content ourselves, so send checksums only where the API demands them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // An endpoint that is down fails within seconds; a request whose socket stays silent for 30 s is given up.
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 30_000 },
  });
  addDeleteObjectsContentMd5(client);
  return client;
}

/**
 * S3's DeleteObjects documentation requires Content-MD5 (or a checksum header).
 * SDK versions since early 2025 send only x-amz-checksum-crc32, which AWS
 * accepts but several S3-compatible servers (older MinIO, Ceph RGW, …) refuse
 * with "Missing required header for this request: Content-Md5". Add it back
 * for DeleteObjects only, at the build step so the header is signed. s3rver
 * ignores it either way.
 */
function addDeleteObjectsContentMd5(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown } | undefined;
      if (context.commandName === 'DeleteObjectsCommand' && request?.headers) {
        const body = request.body;
        if (typeof body === 'string' || body instanceof Uint8Array) {
          request.headers['content-md5'] = createHash('md5').update(body).digest('base64');
        }
      }
      return next(args);
    },
    { step: 'build', name: 'pailDeleteObjectsContentMd5', override: true },
  );
}
