/**
 * Every operation of the HTTP API, named once. A route carries its
 * operation's name in its config; the request log (and later metrics and
 * rate limits) use the name, and the OpenAPI summary comes from here.
 */
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
  listFiles: 'List files (ascending by name, paged)',
  uploadMultipart: "Upload a file (multipart, part named 'file')",
  uploadRaw: 'Upload a file (raw body; Content-Type sets its type)',
  readFile: 'Download a file (GET) or read its metadata (HEAD)',
  deleteFile: 'Delete a file',
  readByUrl: 'Download a file (GET) or read its metadata (HEAD) by its url',
} as const;

export type OperationName = keyof typeof OPERATIONS;
