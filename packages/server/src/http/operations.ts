/**
 * Every operation of the HTTP API, named once. A route carries its
 * operation's name in its config; the request log (and later metrics and
 * rate limits) use the name, and the OpenAPI summary comes from here.
 */
import type { Permission } from '@pail/shared';

export const OPERATIONS = {
  healthz: 'The process is up',
  readyz: 'The metadata store and the blob store answer',
  metrics: 'Prometheus metrics (METRICS_TOKEN: a bearer token)',
  signup: 'Create an account',
  login: 'Log in',
  logout: 'Log out (revokes the session and its token)',
  me: 'The signed-in user',
  listKeys: 'List live API keys',
  createKey: 'Create an API key (the secret is shown once)',
  revokeKey: 'Revoke an API key',
  listBuckets: 'List buckets',
  createBucket: 'Create a bucket',
  getBucket: 'Get a bucket',
  deleteBucket: 'Delete a bucket and all its files',
  setVisibility: 'Make a bucket public or private',
  updateBucket: "Change a bucket's limits: max_file_bytes and allowed_types (null clears one)",
  listFiles: 'List files (ascending by name, paged)',
  uploadMultipart: "Upload a file (multipart, part named 'file')",
  uploadRaw: 'Upload a file (raw body; Content-Type sets its type)',
  readFile: 'Download a file (GET) or read its metadata (HEAD)',
  deleteFile: 'Delete a file',
  readByUrl: 'Download a file (GET) or read its metadata (HEAD) by its url or a signed url',
  uploadBySignedUrl: 'Upload a file (raw body) through a signed PUT url',
  signUrl: 'Make a signed url for a file (GET to download it, PUT to upload it)',
  createResumableUpload: 'Create a resumable upload (tus 1.0: Upload-Length, Upload-Metadata filename and contentType; the body may carry the first bytes)',
  resumeUpload: 'A resumable upload (tus 1.0): HEAD its offset, PATCH the next bytes at Upload-Offset, DELETE to end it',
  listUnfinishedUploads: 'List unfinished uploads (resumable and S3 multipart) with the bytes each holds against the storage cap (?bucket=<id> for one bucket)',
  cancelUnfinishedUpload: 'Cancel an unfinished upload (kind resumable or multipart): its bytes are deleted and no longer held',
} as const;

export type OperationName = keyof typeof OPERATIONS;

/**
 * The permission an API key needs for each operation it can reach
 * (decisions.md, "API keys with limits"); making a signed url also needs the
 * permission of its method, checked by its handler.
 */
export const OPERATION_PERMISSION: Partial<Record<OperationName, Permission>> = {
  listBuckets: 'read',
  getBucket: 'read',
  listFiles: 'read',
  readFile: 'read',
  readByUrl: 'read',
  uploadBySignedUrl: 'write',
  uploadMultipart: 'write',
  uploadRaw: 'write',
  deleteFile: 'delete',
  createBucket: 'manage',
  deleteBucket: 'manage',
  setVisibility: 'manage',
  updateBucket: 'manage',
  signUrl: 'manage',
  createResumableUpload: 'write',
  resumeUpload: 'write',
  // As S3's ListMultipartUploads and AbortMultipartUpload (and a tus DELETE) ask.
  listUnfinishedUploads: 'read',
  cancelUnfinishedUpload: 'write',
};
