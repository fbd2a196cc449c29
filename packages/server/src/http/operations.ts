/**
 * Every operation of the HTTP API, named once. A route carries its
 * operation's name in its config; the request log (and later metrics and
 * rate limits) use the name, the OpenAPI summary comes from here, and
 * OPERATION_ACTION names what each one asks of authorize().
 */
import type { Action } from '../domain/authorize.js';

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
  readFile: "Download a file (GET) or read its metadata (HEAD); ?version_id= reads one version; …/files/<name>/versions lists a file's versions, newest first",
  deleteFile: 'Delete a file (in a versioned bucket: a delete marker, the file stays restorable); ?version_id= deletes that version for good',
  listTrash: "A versioned bucket's trash: files whose latest version is a delete marker, with who deleted them when",
  fileDetails: "A file's details: size, type, ETag, times, url, stored headers and user metadata",
  editFile: "Edit a file's user metadata (replaced whole), type and stored headers; the bytes stay",
  fileTags: "A file's tags (S3's object tagging) as {tags: {key: value}}",
  setFileTags: "Replace a file's tags whole ({} removes them): at most 10, keys up to 128 characters, values up to 256, as S3",
  deleteFileTags: "Remove a file's tags",
  setRetention: "Set, extend or (GOVERNANCE, with bypass_governance) shorten or remove a file version's retention (object lock)",
  setLegalHold: 'Put a file version under a legal hold, or lift it (object lock)',
  zipFolder: 'Download a folder (?prefix=, ending in /) or the whole bucket as one zip, streamed',
  zipSelection: 'Download a selection of files and folders as one zip, streamed (JSON or an HTML form)',
  moveFiles: "Move or rename a file, or a folder (from ending in /) with everything in it, within the bucket or to another of the owner's buckets",
  deleteFolder: 'Delete a folder with every file in it (its path ends in /); answers how many were deleted',
  readByUrl: 'Download a file (GET) or read its metadata (HEAD) by its url or a signed url',
  uploadBySignedUrl: 'Upload a file (raw body) through a signed PUT url',
  signUrl: 'Make a signed url for a file (GET to download it, PUT to upload it); …/files/<name>/restore {version_id} restores a version',
  createResumableUpload: 'Create a resumable upload (tus 1.0: Upload-Length, Upload-Metadata filename and contentType; the body may carry the first bytes)',
  resumeUpload: 'A resumable upload (tus 1.0): HEAD its offset, PATCH the next bytes at Upload-Offset, DELETE to end it',
  listUnfinishedUploads: 'List unfinished uploads (resumable and S3 multipart) with the bytes each holds against the storage cap (?bucket=<id> for one bucket)',
  cancelUnfinishedUpload: 'Cancel an unfinished upload (kind resumable or multipart): its bytes are deleted and no longer held',
  listWebhooks: "List a bucket's webhooks",
  createWebhook: 'Add a webhook to a bucket: {url, events, prefix?, suffix?}; its signing secret is shown once',
  getWebhook: 'Get a webhook',
  updateWebhook: 'Change a webhook (url, events, prefix, suffix) or enable/disable it',
  deleteWebhook: 'Delete a webhook and its undelivered events',
  rotateWebhookSecret: 'Rotate a webhook secret: the new one is shown once; the old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP_SECONDS',
  listWebhookDeliveries: "A webhook's recent deliveries and their attempts",
  resendWebhookDelivery: 'Send a delivery again (the same body and webhook-id)',
  readAudit: 'Your audit log: who changed what (keys, buckets, visibility, webhooks, …), newest first, paged',
  getLifecycle: "A bucket's lifecycle rules (404 when it has none)",
  putLifecycle: "Replace a bucket's lifecycle rules: expire files by age, date, prefix, tags and size, cancel old unfinished uploads",
  deleteLifecycle: "Remove a bucket's lifecycle rules",
} as const;

export type OperationName = keyof typeof OPERATIONS;

/**
 * The action (domain/authorize.ts) each operation a principal can reach
 * is; the auth hook asks authorize() with it, and with the bucket the path
 * names, before the handler runs. Operations left out (accounts, keys,
 * probes) are a session's own or nobody's.
 */
export const OPERATION_ACTION: Partial<Record<OperationName, Action>> = {
  listBuckets: 'listBuckets',
  getBucket: 'readBucket',
  listFiles: 'listObjects',
  listTrash: 'listObjects',
  readFile: 'readObject',
  readByUrl: 'readObject',
  uploadBySignedUrl: 'writeObject',
  uploadMultipart: 'writeObject',
  uploadRaw: 'writeObject',
  deleteFile: 'deleteObject',
  fileDetails: 'readObject',
  editFile: 'writeObject',
  fileTags: 'readObject',
  setFileTags: 'writeObject',
  deleteFileTags: 'writeObject',
  // As S3's PutObjectRetention and PutObjectLegalHold: part of what a writer writes; shortening is the lock rule's to refuse.
  setRetention: 'writeObject',
  setLegalHold: 'writeObject',
  zipFolder: 'readObject',
  zipSelection: 'readObject',
  moveFiles: 'moveObject',
  deleteFolder: 'deleteObject',
  createBucket: 'createBucket',
  deleteBucket: 'manageBucket',
  setVisibility: 'manageBucket',
  updateBucket: 'manageBucket',
  // Not signUrl here: the route also restores a version (files.ts), a write a key without manage may do; each handler
  // asks authorize() with the bucket itself (signFileUrl for signUrl, restore for writeObject).
  createResumableUpload: 'writeObject',
  // HEAD, PATCH and DELETE (termination) of a resumable upload alike.
  resumeUpload: 'writeObject',
  listUnfinishedUploads: 'listUploads',
  cancelUnfinishedUpload: 'cancelUpload',
  listWebhooks: 'manageBucket',
  createWebhook: 'manageBucket',
  getWebhook: 'manageBucket',
  updateWebhook: 'manageBucket',
  deleteWebhook: 'manageBucket',
  rotateWebhookSecret: 'manageBucket',
  listWebhookDeliveries: 'manageBucket',
  resendWebhookDelivery: 'manageBucket',
  readAudit: 'manageBucket',
  getLifecycle: 'readBucket',
  // Rules that delete files, as S3's PutBucketLifecycleConfiguration.
  putLifecycle: 'manageBucket',
  deleteLifecycle: 'manageBucket',
};
