/**
 * Table types, as Kysely sees them. Timestamps are ISO 8601 strings in both
 * dialects (they sort correctly as text); booleans are 0/1 integers; big
 * integers come back as numbers (the PostgreSQL pool parses int8).
 */
import type { ColumnType, Generated, Kysely, Selectable } from 'kysely';
import type { EventTables } from './event-tables.js';

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  plan: string;
  storage_used_bytes: Generated<number>;
  created_at: string;
  /** When the operator deleted the account (domain/user-deletion.ts); null: live. Not part of AccountRow. */
  deleted_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SessionsTable {
  id: string;
  user_id: number;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** A JSON list of bucket ids; null: every bucket of the owner. */
  buckets: string | null;
  /** Comma-separated permissions; null: all of them. */
  permissions: string | null;
  expires_at: string | null;
  /** The S3 access key id (20 characters); null for keys made before S3 credentials existed. */
  access_key_id: string | null;
  /** The S3 secret, sealed (domain/s3-credentials.ts); null with access_key_id. */
  sealed_secret: string | null;
}

export interface BucketsTable {
  id: Generated<number>;
  owner_id: number;
  name: string;
  /** Stable, globally unique; the bucket's part of blob keys and of its public URL. */
  storage_name: string;
  public: number;
  object_count: Generated<number>;
  total_bytes: Generated<number>;
  created_at: string;
  deleted_at: string | null;
  /** The largest file it accepts; null: the server's limit only. */
  max_file_bytes: number | null;
  /** The types it accepts, a JSON list of MIME types or `type/*` patterns; null: any. */
  allowed_types: string | null;
  /** Its tags (S3's bucket tagging), canonical JSON (domain/object-tags.ts); null: none. Not read with the bucket: only bucket tagging reads it. */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
  /** 'unversioned' (the default), 'enabled' or 'suspended'; once enabled, never unversioned again (domain/versions.ts). */
  versioning: Generated<BucketVersioning>;
  /** The part of total_bytes its noncurrent versions hold (delete markers hold none). */
  noncurrent_bytes: Generated<number>;
  /** 1: made with object lock (versioned for good; domain/object-lock.ts). */
  object_lock: Generated<number>;
  /** Its default retention's mode (GOVERNANCE or COMPLIANCE); null: none. */
  lock_default_mode: ColumnType<string | null, string | null | undefined, string | null>;
  /** Its default retention's length in days, or in years (one of the two with a mode). */
  lock_default_days: ColumnType<number | null, number | null | undefined, number | null>;
  lock_default_years: ColumnType<number | null, number | null | undefined, number | null>;
}

/**
 * A version's retention and legal hold (object lock), keyed by the version's
 * storage key, whichever table holds the version's row; written in the commit
 * that makes the version, changed by PutObjectRetention and the like.
 */
export interface VersionLocksTable {
  storage_key: string;
  bucket_id: number;
  filename: string;
  /** GOVERNANCE or COMPLIANCE; null: no retention. */
  mode: string | null;
  /** ISO 8601, with mode. */
  retain_until: string | null;
  legal_hold: Generated<number>;
}

export type BucketVersioning = 'unversioned' | 'enabled' | 'suspended';

export interface ObjectsTable {
  bucket_id: number;
  filename: string;
  storage_key: string;
  size: number;
  content_type: string;
  etag: string;
  created_at: string;
  updated_at: string;
  /** 1 when the bytes are in inline_blobs (small files), 0 when in the blob store. */
  inline: Generated<number>;
  /** Headers and user metadata stored by an S3 upload (JSON, header name to value); null for none. */
  metadata: string | null;
  /** Verified full-object checksums an S3 upload sent (JSON, algorithm to base64, e.g. {"crc32":"…"}); null for none. */
  checksums: string | null;
  /** Its tags (S3's object tagging), canonical JSON (domain/object-tags.ts); null: none. */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
  /** The name folded for case-insensitive search (db/folded-names.ts); every write sets it. Not part of ObjectRow: only search reads it. */
  name_folded: ColumnType<string | null, string, string>;
  /** The name's key for "sort by name", natural and case-insensitive (db/name-sort-keys.ts); every write sets it. Not part of ObjectRow. */
  name_sort: ColumnType<string | null, string, string>;
  /** The multipart upload that made this version (null for any other write): a repeated completion finds it here. Not part of ObjectRow. */
  upload_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** That upload's parts, JSON [[number, size, checksum?], …] (domain/object-parts.ts); null when not multipart or completed before 0016. Not part of ObjectRow. */
  parts: ColumnType<string | null, string | null | undefined, string | null>;
  /** Its version id in a versioned bucket; null: S3's `null` version (every file of an unversioned bucket). */
  version_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * A noncurrent version or a delete marker (migration 0020): the columns of an
 * objects row, and when it stopped being current. `id` orders a file's
 * versions (higher is newer).
 */
export interface ObjectVersionsTable {
  id: Generated<number>;
  bucket_id: number;
  filename: string;
  version_id: string | null;
  /** Null for a delete marker. */
  storage_key: string | null;
  size: number;
  content_type: string;
  etag: string;
  inline: number;
  metadata: string | null;
  checksums: string | null;
  tags: string | null;
  upload_id: string | null;
  parts: string | null;
  created_at: string;
  updated_at: string;
  noncurrent_at: string;
  is_delete_marker: number;
  /** Who made a delete marker ("key:12", "session:…", "operator", …); null otherwise. */
  deleted_by: string | null;
}

/** Small files' bytes, kept beside their rows and written in the same transaction (object-writes/). */
export interface InlineBlobsTable {
  storage_key: string;
  bytes: Buffer;
}

/** One row (id 1): moved by changes that cached lookups depend on (migrations.ts). */
export interface CacheEpochsTable {
  id: number;
  epoch: number;
}

/** An upload in flight: bytes held against its owner's cap until it ends (or the row lapses). */
export interface UploadReservationsTable {
  id: string;
  user_id: number;
  bytes: number;
  expires_at: string;
}

/** An S3 multipart upload begun and not yet completed or aborted (migrations.ts 0008). */
export interface MultipartUploadsTable {
  id: string;
  owner_id: number;
  bucket_id: number;
  filename: string;
  content_type: string;
  /** As objects.metadata: the headers CreateMultipartUpload sent, for the completed object. */
  metadata: string | null;
  /** As objects.tags: the x-amz-tagging CreateMultipartUpload sent, for the completed object. */
  tags: string | null;
  created_at: string;
  /** The flexible checksum its parts and object keep (crc32, crc32c, crc64nvme, sha1, sha256); null: none. */
  checksum_algorithm: string | null;
  /** COMPOSITE (a checksum of the parts' checksums) or FULL_OBJECT (of every byte); null without an algorithm. */
  checksum_type: string | null;
  /** The object lock CreateMultipartUpload asked for (JSON, domain/object-lock.ts), for the completed object; null: the bucket's default. */
  lock: string | null;
}

/** A part kept for a multipart upload: its bytes in the blob store, its MD5 (hex) its ETag. */
export interface MultipartPartsTable {
  upload_id: string;
  part_number: number;
  storage_key: string;
  size: number;
  md5: string;
  created_at: string;
  /** Its checksum (base64) in the upload's checksum_algorithm; null when the upload keeps none. */
  checksum: string | null;
}

/** A resumable (tus) upload in progress: its declared length is held against the cap until it ends. */
export interface ResumableUploadsTable {
  id: string;
  owner_id: number;
  bucket_id: number;
  filename: string;
  content_type: string;
  length: number;
  /** Bytes received and kept so far: the tus offset. */
  received: number;
  /** The tus Upload-Metadata the client sent, as JSON (shown back on HEAD). */
  metadata: string | null;
  created_at: string;
  /** When its last bytes arrived: it expires 24 hours after. */
  updated_at: string;
  /** The request writing its bytes on some instance (a random token), while it holds the lease; PostgreSQL only (domain/resumable-writers.ts). */
  writer: ColumnType<string | null, string | null | undefined>;
  /** Until when (ms since the epoch) `writer` holds it, unless renewed. */
  writer_until: ColumnType<number | null, number | null | undefined>;
  /** 1 when a newer request asked `writer` to stop. */
  writer_wanted: Generated<number>;
}

/** A bucket's CORS rules (S3's PutBucketCors), as JSON; a bucket without a row has none. */
export interface BucketCorsTable {
  bucket_id: number;
  rules: string;
}

/** A bucket's S3 public access block, each switch 0 or 1; a bucket without a row has none (domain/public-access.ts). */
export interface BucketPublicAccessBlocksTable {
  bucket_id: number;
  block_public_acls: number;
  ignore_public_acls: number;
  block_public_policy: number;
  restrict_public_buckets: number;
}

/** A bucket's lifecycle rules (domain/lifecycle-rules.ts), as JSON; a bucket without a row has none. */
export interface BucketLifecycleTable {
  bucket_id: number;
  rules: string;
}

/** Background work one instance at a time does (the lifecycle sweep): who holds it, until when (ms since the epoch). */
export interface BackgroundLeasesTable {
  name: string;
  holder: string;
  until_ms: number;
}

// Issue 39's tables (webhooks, their outbox, the audit log) are declared beside: event-tables.ts.
export interface Database extends EventTables {
  users: UsersTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  buckets: BucketsTable;
  objects: ObjectsTable;
  object_versions: ObjectVersionsTable;
  inline_blobs: InlineBlobsTable;
  cache_epochs: CacheEpochsTable;
  upload_reservations: UploadReservationsTable;
  multipart_uploads: MultipartUploadsTable;
  multipart_parts: MultipartPartsTable;
  bucket_cors: BucketCorsTable;
  bucket_public_access_blocks: BucketPublicAccessBlocksTable;
  resumable_uploads: ResumableUploadsTable;
  bucket_lifecycle: BucketLifecycleTable;
  background_leases: BackgroundLeasesTable;
  version_locks: VersionLocksTable;
}

/** The database, or a transaction on it: repository functions take either. */
export type Db = Kysely<Database>;

export type UserRow = Selectable<UsersTable>;
export type BucketRow = Omit<Selectable<BucketsTable>, 'tags'>;
export type ObjectRow = Omit<Selectable<ObjectsTable>, 'name_folded' | 'name_sort' | 'upload_id' | 'parts' | 'version_id'> & { version_id?: string | null };
export type ObjectVersionRow = Selectable<ObjectVersionsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;

/** A user as requests carry it (and caches keep it): everything but the password hash (and the deletion mark: a live account's is null). */
export type AccountRow = Omit<UserRow, 'password_hash' | 'deleted_at'>;

/** What an upload needs of a bucket: the fields fixed when it is created. */
export type BucketIdentity = Pick<BucketRow, 'id' | 'owner_id' | 'storage_name'>;
/** What the S3 API's writes need of a bucket found by name: its identity, and its visibility (an object's ACL). */
export type NamedBucket = BucketIdentity & Pick<BucketRow, 'public'>;
