/**
 * The API contract as TypeBox schemas. The server validates requests and
 * generates its OpenAPI document from these; the SDK and dashboard use the
 * static types. Field names and shapes follow service.md and decisions.md.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { PLANS } from './plans.js';
import { BucketLockFields, CREATE_BUCKET_LOCK_MESSAGES, CreateBucketLockFields } from './object-lock-schemas.js';

export const MessageSchema = Type.Object({ message: Type.String() });

export const StorageBucketSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    public: Type.Boolean(),
    object_count: Type.Integer(),
    total_bytes: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    max_file_bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'The largest file this bucket accepts; null: only the server-wide limit' }),
    allowed_types: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'The MIME types (or type/* patterns) this bucket accepts, checked against the bytes; null: any',
    }),
    versioning: Type.Union([Type.Literal('unversioned'), Type.Literal('enabled'), Type.Literal('suspended')], {
      description: 'enabled: every write keeps the version it replaces and a delete keeps the file restorable; once enabled, only suspended',
    }),
    noncurrent_bytes: Type.Integer({ description: 'The part of total_bytes that old versions hold (total_bytes counts every stored version)' }),
    ...BucketLockFields,
  },
  { title: 'StorageBucket' },
);
export type StorageBucket = Static<typeof StorageBucketSchema>;

export const BucketObjectSchema = Type.Object(
  {
    id: Type.String({ description: '<bucket_id>/<filename>' }),
    bucket_id: Type.Integer(),
    storage_name: Type.String({ description: 'Key of the object in the blob store' }),
    filename: Type.String(),
    size: Type.Integer(),
    content_type: Type.String(),
    url: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time', description: 'When this version was uploaded: moves when the file is replaced' }),
  },
  { title: 'BucketObject' },
);
export type BucketObject = Static<typeof BucketObjectSchema>;

export const UploadResultSchema = Type.Object(
  {
    filename: Type.String(),
    size: Type.Integer(),
    updated: Type.Boolean(),
    version_id: Type.Optional(
      Type.String({
        description: 'In a bucket with versioning enabled, the id of the version this upload made (a suspended bucket writes the unnamed `null` version)',
      }),
    ),
  },
  { title: 'UploadResult' },
);
export type UploadResult = Static<typeof UploadResultSchema>;

export const MoveResultSchema = Type.Object(
  {
    moved: Type.Integer({ description: 'Files moved by this request (a folder: each file under it and its marker; 0 when nothing was left to move)' }),
    bucket_id: Type.Integer({ description: 'The bucket moved from' }),
    from: Type.String(),
    to_bucket_id: Type.Integer({ description: 'The bucket moved to (bucket_id when within one bucket)' }),
    to: Type.String(),
  },
  { title: 'MoveResult' },
);
export type MoveResult = Static<typeof MoveResultSchema>;

export const DeleteFolderResultSchema = Type.Object(
  {
    deleted: Type.Integer({ description: 'Files deleted by this request: each file under the folder and its marker (0 when none was left)' }),
    prefix: Type.String({ description: 'The folder, ending in /' }),
  },
  { title: 'DeleteFolderResult' },
);
export type DeleteFolderResult = Static<typeof DeleteFolderResultSchema>;

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    plan: Type.Union(PLANS.map((p) => Type.Literal(p))),
    storage_used_bytes: Type.Integer(),
    storage_held_bytes: Type.Integer({
      description: 'Bytes held against the cap by unfinished uploads (resumable uploads and S3 multipart uploads), beside the bytes stored',
    }),
    storage_limit_bytes: Type.Integer(),
    rate_limit_per_minute: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'User' },
);
export type User = Static<typeof UserSchema>;

export const UNFINISHED_UPLOAD_KINDS = ['resumable', 'multipart'] as const;
export type UnfinishedUploadKind = (typeof UNFINISHED_UPLOAD_KINDS)[number];

/** An upload begun and not finished (decisions.md): what it holds against the cap until it finishes, is cancelled or expires. */
export const UnfinishedUploadSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union(
      UNFINISHED_UPLOAD_KINDS.map((k) => Type.Literal(k)),
      { description: 'resumable: a tus upload; multipart: an S3 multipart upload' },
    ),
    bucket_id: Type.Integer(),
    bucket_name: Type.String(),
    filename: Type.String({ description: "The file's name (the S3 key of a multipart upload)" }),
    content_type: Type.String(),
    held_bytes: Type.Integer({ description: "Held against the cap: a resumable upload's declared length, a multipart upload's kept parts" }),
    received_bytes: Type.Integer({ description: 'Bytes the server has kept so far' }),
    length: Type.Union([Type.Integer(), Type.Null()], { description: 'Resumable: its declared length (Upload-Length); multipart: null' }),
    offset: Type.Union([Type.Integer(), Type.Null()], { description: 'Resumable: where the next PATCH starts (Upload-Offset); multipart: null' }),
    parts: Type.Union([Type.Integer(), Type.Null()], { description: 'Multipart: how many parts are kept; resumable: null' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time', description: 'When it last received bytes' }),
  },
  { title: 'UnfinishedUpload' },
);
export type UnfinishedUpload = Static<typeof UnfinishedUploadSchema>;

/** What an API key may do (decisions.md, "API keys with limits"). */
export const PERMISSIONS = ['read', 'write', 'delete', 'manage', 'bypass-governance'] as const;
export type Permission = (typeof PERMISSIONS)[number];
/**
 * What a key has when it is made without a list: every permission but
 * bypass-governance, which removes what a GOVERNANCE retention protects and
 * so is only ever given by name (decisions.md, "Object lock").
 */
export const DEFAULT_PERMISSIONS: readonly Permission[] = ['read', 'write', 'delete', 'manage'];
const PermissionSchema = Type.Union(PERMISSIONS.map((p) => Type.Literal(p)));

const KeyLimitsFields = {
  buckets: Type.Union([Type.Array(Type.Integer()), Type.Null()], { description: 'The bucket ids the key may use; null: every bucket, also future ones' }),
  permissions: Type.Array(PermissionSchema),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null: never expires' }),
};

export const ApiKeySchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String(),
    access_key_id: Type.Union([Type.String(), Type.Null()], { description: 'The S3 access key id; null for keys made before S3 credentials existed' }),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    ...KeyLimitsFields,
  },
  { title: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String(),
  key: Type.String({ description: 'The secret. Shown only in this response.' }),
  access_key_id: Type.String({ description: 'The S3 access key id (S3-compatible API)' }),
  secret_access_key: Type.String({ description: 'The S3 secret access key. Shown only in this response.' }),
  created_at: Type.String({ format: 'date-time' }),
  ...KeyLimitsFields,
});
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;

export const SignedUrlSchema = Type.Object(
  {
    url: Type.String({ description: 'Works without a key or session until expires_at' }),
    method: Type.Union([Type.Literal('GET'), Type.Literal('PUT')]),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { title: 'SignedUrl' },
);
export type SignedUrl = Static<typeof SignedUrlSchema>;

/** `{data: T}`, the wrapper of every successful JSON response. */
export const Data = <T extends TSchema>(schema: T) => Type.Object({ data: schema });

export const ListBucketsResponseSchema = Type.Object({ data: Type.Array(StorageBucketSchema), buckets: Type.Array(StorageBucketSchema) });
export type ListBucketsResponse = Static<typeof ListBucketsResponseSchema>;

export const ListUnfinishedUploadsResponseSchema = Type.Object({
  data: Type.Array(UnfinishedUploadSchema),
  held_bytes: Type.Integer({ description: 'What the listed uploads hold together' }),
});
export type ListUnfinishedUploadsResponse = Static<typeof ListUnfinishedUploadsResponseSchema>;

export const ListFilesResponseSchema = Type.Object({
  data: Type.Array(BucketObjectSchema),
  objects: Type.Array(BucketObjectSchema, { description: 'The same list as data' }),
  folders: Type.Array(Type.String(), { description: 'With delimiter=/: the folders directly under prefix, each ending in /; otherwise []' }),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
export type ListFilesResponse = Static<typeof ListFilesResponseSchema>;

export const AuthResultSchema = Type.Object({ user: UserSchema, token: Type.String() });
export type AuthResult = Static<typeof AuthResultSchema>;

// Request bodies. The types are checked by these schemas (the server's
// validator), with the messages in `errorMessage` (ajv-errors); the rules
// beyond types (name shapes, contradictions) are the server's domain code.
import { NOT_AN_OBJECT } from './messages.js';
export { NOT_AN_OBJECT };

export const CreateBucketBody = Type.Object(
  {
    name: Type.String({ description: 'Bucket name', examples: ['photos'] }),
    visibility: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('private')])),
    public: Type.Optional(Type.Boolean({ description: 'Alternative to visibility' })),
    max_file_bytes: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'null clears it' })),
    allowed_types: Type.Optional(
      Type.Union([Type.Array(Type.String(), { maxItems: 100 }), Type.Null()], {
        description: 'MIME types or type/* patterns; null clears it',
        examples: [['image/*', 'application/pdf']],
      }),
    ),
    ...CreateBucketLockFields,
  },
  {
    additionalProperties: true,
    errorMessage: {
      type: NOT_AN_OBJECT,
      required: { name: 'Bucket name is required' },
      properties: {
        name: 'Bucket name must be a string',
        visibility: 'visibility must be "public" or "private"',
        public: 'public must be true or false',
        max_file_bytes: 'max_file_bytes must be a whole number of bytes (at least 1) or null',
        allowed_types: 'allowed_types must be a list of at most 100 MIME types (or type/* patterns), or null',
        ...CREATE_BUCKET_LOCK_MESSAGES,
      },
    },
  },
);

/** PATCH of a bucket: its limits (absent: unchanged; null: cleared). */
export const UpdateBucketBody = Type.Object(
  {
    max_file_bytes: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'null clears it' })),
    allowed_types: Type.Optional(
      Type.Union([Type.Array(Type.String(), { maxItems: 100 }), Type.Null()], {
        description: 'MIME types or type/* patterns; null clears it',
        examples: [['image/*', 'application/pdf']],
      }),
    ),
    versioning: Type.Optional(
      Type.Union([Type.Literal('enabled'), Type.Literal('suspended')], { description: 'Keep old versions (enabled) or stop keeping them (suspended)' }),
    ),
    ...CreateBucketLockFields,
  },
  {
    additionalProperties: true,
    errorMessage: {
      type: NOT_AN_OBJECT,
      properties: {
        max_file_bytes: 'max_file_bytes must be a whole number of bytes (at least 1) or null',
        allowed_types: 'allowed_types must be a list of at most 100 MIME types (or type/* patterns), or null',
        versioning: 'versioning must be "enabled" or "suspended"',
      },
    },
  },
);

export const VisibilityBody = Type.Object(
  {
    visibility: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('private')])),
    public: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: true,
    errorMessage: { type: NOT_AN_OBJECT, properties: { visibility: 'visibility must be "public" or "private"', public: 'public must be true or false' } },
  },
);

export const CredentialsBody = Type.Object(
  { email: Type.String(), password: Type.String() },
  {
    errorMessage: {
      type: NOT_AN_OBJECT,
      required: { email: 'email is required', password: 'password is required' },
      properties: { email: 'email is required', password: 'password is required' },
    },
  },
);

export const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    buckets: Type.Optional(Type.Union([Type.Array(Type.Integer(), { minItems: 1, maxItems: 1000 }), Type.Null()])),
    permissions: Type.Optional(Type.Union([Type.Array(PermissionSchema, { minItems: 1, uniqueItems: true }), Type.Null()])),
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    expires_in: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 100 * 365 * 24 * 3600 }), Type.Null()])),
  },
  {
    errorMessage: {
      type: NOT_AN_OBJECT,
      properties: {
        name: 'name must be a string',
        buckets: 'buckets must be a list of 1 to 1000 bucket ids',
        permissions: 'permissions must be a list of read, write, delete, manage and bypass-governance (at least one, each once)',
        expires_at: 'expires_at must be an ISO 8601 date and time',
        expires_in: 'expires_in must be a whole number of seconds, at least 1',
      },
    },
  },
);

export const SignedUrlBody = Type.Object(
  {
    method: Type.Optional(Type.Union([Type.Literal('GET'), Type.Literal('PUT')])),
    expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: 604800 })),
    content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    max_bytes: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  {
    errorMessage: {
      type: NOT_AN_OBJECT,
      properties: {
        method: 'method must be "GET" or "PUT"',
        expires_in: 'expires_in must be a whole number of seconds from 1 to 604800',
        content_type: 'content_type must be a MIME type',
        max_bytes: 'max_bytes must be a whole number of bytes',
      },
    },
  },
);

/** A move or rename of a file, or of a folder (`from` ending in `/`) with everything in it. */
export const MoveBody = Type.Object(
  {
    from: Type.String({ description: 'The file, or the folder (ending in /), to move', examples: ['docs/report.pdf'] }),
    to: Type.String({ description: 'Its new name (a folder: ending in /)', examples: ['archive/report-2026.pdf'] }),
    to_bucket_id: Type.Optional(Type.Integer({ minimum: 1, description: "Another of the owner's buckets to move into; absent: the same bucket" })),
    overwrite: Type.Optional(Type.Boolean({ description: 'Replace files already at the new names; absent or false: 409 FileExists' })),
  },
  {
    errorMessage: {
      type: NOT_AN_OBJECT,
      required: { from: 'from is required: the file (or folder, ending in /) to move', to: 'to is required: the new name' },
      properties: {
        from: 'from must be a string',
        to: 'to must be a string',
        to_bucket_id: 'to_bucket_id must be a bucket id',
        overwrite: 'overwrite must be true or false',
      },
    },
  },
);

export const ListFilesQuery = Type.Object({
  prefix: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String({ description: '1 to 1000, default 1000' })),
  cursor: Type.Optional(Type.String()),
  delimiter: Type.Optional(Type.String({ description: 'Only "/": list the folders under prefix apart from its files' })),
  search: Type.Optional(
    Type.String({
      description:
        'Files whose name after prefix contains this, ignoring case (Unicode); % and _ are literal. With delimiter=/: the whole tree under prefix, files only',
    }),
  ),
  sort: Type.Optional(Type.String({ description: 'name (default), size, type or updated; ties by name', examples: ['size'] })),
  order: Type.Optional(Type.String({ description: 'asc (default) or desc' })),
});
