/**
 * The API contract as TypeBox schemas. The server validates requests and
 * generates its OpenAPI document from these; the SDK and dashboard use the
 * static types. Field names and shapes follow service.md and decisions.md.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { PLANS } from './plans.js';

export const ErrorSchema = Type.Object(
  { error: Type.String(), code: Type.Optional(Type.String()) },
  { title: 'Error', description: 'Every error body' },
);

export const MessageSchema = Type.Object({ message: Type.String() });

export const StorageBucketSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    public: Type.Boolean(),
    object_count: Type.Integer(),
    total_bytes: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
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
  },
  { title: 'BucketObject' },
);
export type BucketObject = Static<typeof BucketObjectSchema>;

export const UploadResultSchema = Type.Object(
  { filename: Type.String(), size: Type.Integer(), updated: Type.Boolean() },
  { title: 'UploadResult' },
);
export type UploadResult = Static<typeof UploadResultSchema>;

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    plan: Type.Union(PLANS.map((p) => Type.Literal(p))),
    storage_used_bytes: Type.Integer(),
    storage_limit_bytes: Type.Integer(),
    rate_limit_per_minute: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'User' },
);
export type User = Static<typeof UserSchema>;

export const ApiKeySchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String(),
  key: Type.String({ description: 'The secret. Shown only in this response.' }),
  created_at: Type.String({ format: 'date-time' }),
});
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;

/** `{data: T}`, the wrapper of every successful JSON response. */
export const Data = <T extends TSchema>(schema: T) => Type.Object({ data: schema });

// Request bodies. Shapes are loose on purpose (unknown fields, wrong types)
// so that the domain code can answer with the precise messages decisions.md asks for.
export const CreateBucketBody = Type.Object(
  {
    name: Type.Optional(Type.Unknown({ description: 'Bucket name', examples: ['photos'] })),
    visibility: Type.Optional(Type.Unknown({ description: '"public" or "private"' })),
    public: Type.Optional(Type.Unknown({ description: 'Alternative to visibility' })),
  },
  { additionalProperties: true },
);
export type CreateBucketInput = { name: string; visibility?: 'public' | 'private'; public?: boolean };

export const VisibilityBody = Type.Object(
  {
    visibility: Type.Optional(Type.Unknown({ description: '"public" or "private"' })),
    public: Type.Optional(Type.Unknown({ description: 'true or false' })),
  },
  { additionalProperties: true },
);

export const CredentialsBody = Type.Object({
  email: Type.Optional(Type.Unknown()),
  password: Type.Optional(Type.Unknown()),
});

export const CreateKeyBody = Type.Object({ name: Type.Optional(Type.Unknown()) });

export const ListFilesQuery = Type.Object({
  prefix: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String({ description: '1 to 1000, default 1000' })),
  cursor: Type.Optional(Type.String()),
});

export interface ListBucketsResponse {
  data: StorageBucket[];
  buckets: StorageBucket[];
}
export interface ListFilesResponse {
  data: BucketObject[];
  objects: BucketObject[];
  next_cursor: string | null;
}
export interface AuthResult {
  user: User;
  token: string;
}
