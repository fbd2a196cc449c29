/**
 * The one migration history for both dialects. Migrations are frozen in time:
 * never edit one that has shipped, add a new one. The few dialect differences
 * are in the column helpers at the top, not scattered through the migrations.
 */
import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { foldName } from './folded-names.js';

export type Dialect = 'sqlite' | 'postgres';

function columns(dialect: Dialect) {
  return {
    /** Increasing ids that are never reused (AUTOINCREMENT in SQLite). */
    id: (col: ColumnDefinitionBuilder) => (dialect === 'sqlite' ? col.primaryKey().autoIncrement() : col.primaryKey().generatedAlwaysAsIdentity()),
    idType: dialect === 'sqlite' ? ('integer' as const) : ('bigint' as const),
    /** Byte order, so listings sort the same way in both dialects. */
    binaryText: dialect === 'sqlite' ? sql`text` : sql`text collate "C"`,
    bytes: dialect === 'sqlite' ? ('blob' as const) : ('bytea' as const),
  };
}

function initial(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', c.idType, c.id)
        .addColumn('email', 'text', (col) => col.notNull().unique())
        .addColumn('password_hash', 'text', (col) => col.notNull())
        .addColumn('plan', 'text', (col) => col.notNull().defaultTo('free'))
        .addColumn('storage_used_bytes', 'bigint', (col) => col.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('user_id', c.idType, (col) => col.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('expires_at', 'text', (col) => col.notNull())
        .addColumn('revoked_at', 'text')
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', c.idType, c.id)
        .addColumn('user_id', c.idType, (col) => col.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('prefix', 'text', (col) => col.notNull())
        .addColumn('key_hash', 'text', (col) => col.notNull().unique())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_user').on('api_keys').column('user_id').execute();

      await db.schema
        .createTable('buckets')
        .addColumn('id', c.idType, c.id)
        .addColumn('owner_id', c.idType, (col) => col.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('storage_name', 'text', (col) => col.notNull().unique())
        .addColumn('public', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('object_count', 'bigint', (col) => col.notNull().defaultTo(0))
        .addColumn('total_bytes', 'bigint', (col) => col.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('deleted_at', 'text')
        .execute();
      // Names are unique per owner among live buckets only: a deleted name can be reused.
      await db.schema
        .createIndex('buckets_owner_live_name')
        .on('buckets')
        .columns(['owner_id', 'name'])
        .unique()
        .where(sql.ref('deleted_at'), 'is', null)
        .execute();

      await db.schema
        .createTable('objects')
        .addColumn('bucket_id', c.idType, (col) => col.notNull().references('buckets.id'))
        .addColumn('filename', c.binaryText, (col) => col.notNull())
        .addColumn('storage_key', 'text', (col) => col.notNull().unique())
        .addColumn('size', 'bigint', (col) => col.notNull())
        .addColumn('content_type', 'text', (col) => col.notNull())
        .addColumn('etag', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addPrimaryKeyConstraint('objects_pk', ['bucket_id', 'filename'])
        .execute();
    },
  };
}

/**
 * Small files' bytes in the metadata database, written in the same transaction
 * as their row (see db/object-writes/). `objects.inline` says where a
 * version's bytes are, so reads never have to look in both places.
 */
function inlineBlobs(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('inline_blobs')
        .addColumn('storage_key', 'text', (col) => col.primaryKey())
        .addColumn('bytes', c.bytes, (col) => col.notNull())
        .execute();
      await db.schema
        .alterTable('objects')
        .addColumn('inline', 'integer', (col) => col.notNull().defaultTo(0))
        .execute();
    },
  };
}

/**
 * A counter that changes which cached lookups a server may keep are moved by
 * in their own transaction (a key revoked, a plan changed), so that an
 * embedded server notices changes made by another process, the `pail` CLI,
 * at its next request (cache/caches.ts).
 */
function cacheEpochs(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('cache_epochs')
        .addColumn('id', 'integer', (col) => col.primaryKey())
        .addColumn('epoch', 'bigint', (col) => col.notNull())
        .execute();
      await db.insertInto('cache_epochs').values({ id: 1, epoch: 0 }).execute();
    },
  };
}

/**
 * Uploads in flight hold their bytes against the owner's cap until they end
 * (domain/uploads.ts). A row per upload, so a crashed instance's
 * reservations lapse at `expires_at` instead of holding the bytes for ever.
 */
function uploadReservations(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('upload_reservations')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('user_id', c.idType, (col) => col.notNull().references('users.id').onDelete('cascade'))
        .addColumn('bytes', 'bigint', (col) => col.notNull())
        .addColumn('expires_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('upload_reservations_user').on('upload_reservations').column('user_id').execute();
    },
  };
}

/**
 * Keys with limits (decisions.md): the buckets a key may use (a JSON list of
 * ids; null: all), its permissions (comma-separated; null: all) and when it
 * expires (null: never).
 */
function keyLimits(): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const column of ['buckets', 'permissions', 'expires_at']) {
        await db.schema.alterTable('api_keys').addColumn(column, 'text').execute();
      }
    },
  };
}

/**
 * S3 credentials (issue 23): every new key also gets an access key id, found
 * by it (unique; null for keys made before), and its secret sealed with
 * AES-256-GCM (domain/s3-credentials.ts): SigV4 needs the secret itself, so
 * it cannot be stored as a hash like the key.
 */
function s3Credentials(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('api_keys').addColumn('access_key_id', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('sealed_secret', 'text').execute();
      await db.schema.createIndex('api_keys_access_key_id').unique().on('api_keys').column('access_key_id').execute();
    },
  };
}

/**
 * Per-object headers and user metadata (issue 23): what an S3 upload sends
 * as Content-Disposition, Content-Encoding, Cache-Control, Expires and
 * x-amz-meta-*, as one JSON object; null for files that have none (every
 * Pail API upload).
 */
function objectMetadata(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('metadata', 'text').execute();
    },
  };
}

/**
 * Full-object checksums (issue 24): the flexible checksum an S3 upload sent
 * and had verified (x-amz-checksum-crc32 and kin), as JSON, to be returned
 * on GET and HEAD with x-amz-checksum-mode: ENABLED; null when none was sent.
 */
function objectChecksums(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('checksums', 'text').execute();
    },
  };
}

/**
 * S3 multipart uploads (issue 24): an upload begun and not yet completed or
 * aborted, and the parts it keeps (each in the blob store under its own key,
 * counted against the owner's cap while kept: upload-reservations.ts).
 */
function multipartUploads(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('multipart_uploads')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('owner_id', c.idType, (col) => col.notNull().references('users.id').onDelete('cascade'))
        .addColumn('bucket_id', c.idType, (col) => col.notNull().references('buckets.id'))
        .addColumn('filename', c.binaryText, (col) => col.notNull())
        .addColumn('content_type', 'text', (col) => col.notNull())
        .addColumn('metadata', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('multipart_uploads_bucket').on('multipart_uploads').columns(['bucket_id', 'filename', 'id']).execute();
      await db.schema.createIndex('multipart_uploads_owner').on('multipart_uploads').column('owner_id').execute();
      await db.schema
        .createTable('multipart_parts')
        .addColumn('upload_id', 'text', (col) => col.notNull().references('multipart_uploads.id').onDelete('cascade'))
        .addColumn('part_number', 'integer', (col) => col.notNull())
        .addColumn('storage_key', 'text', (col) => col.notNull().unique())
        .addColumn('size', 'bigint', (col) => col.notNull())
        .addColumn('md5', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addPrimaryKeyConstraint('multipart_parts_pk', ['upload_id', 'part_number'])
        .execute();
    },
  };
}

/**
 * Flexible checksums of multipart uploads (issue 24): the algorithm and type
 * CreateMultipartUpload chose (none: the upload keeps none), and each part's
 * checksum in that algorithm (base64), for the object's checksum at completion.
 */
function multipartChecksums(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('multipart_uploads').addColumn('checksum_algorithm', 'text').execute();
      await db.schema.alterTable('multipart_uploads').addColumn('checksum_type', 'text').execute();
      await db.schema.alterTable('multipart_parts').addColumn('checksum', 'text').execute();
    },
  };
}

/**
 * Per-bucket limits (issue 25): the largest file a bucket accepts and the
 * types it accepts (a JSON list of MIME types or type/* patterns); null: no
 * limit beyond the server's.
 */
function bucketLimits(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('buckets').addColumn('max_file_bytes', 'bigint').execute();
      await db.schema.alterTable('buckets').addColumn('allowed_types', 'text').execute();
    },
  };
}

/**
 * Resumable (tus) uploads (issue 25): an upload created and not yet finished,
 * expired or terminated. Its declared length counts against the owner's cap
 * while it lives (holdings.ts); its bytes so far are in the blob store's
 * staging area under its id (blob/staging.ts).
 */
function resumableUploads(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('resumable_uploads')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('owner_id', c.idType, (col) => col.notNull().references('users.id').onDelete('cascade'))
        .addColumn('bucket_id', c.idType, (col) => col.notNull().references('buckets.id'))
        .addColumn('filename', c.binaryText, (col) => col.notNull())
        .addColumn('content_type', 'text', (col) => col.notNull())
        .addColumn('length', 'bigint', (col) => col.notNull())
        .addColumn('received', 'bigint', (col) => col.notNull())
        .addColumn('metadata', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('resumable_uploads_owner').on('resumable_uploads').column('owner_id').execute();
      await db.schema.createIndex('resumable_uploads_updated').on('resumable_uploads').column('updated_at').execute();
    },
  };
}

/**
 * Bucket CORS (issue 24): a bucket's CORS rules as S3's PutBucketCors set
 * them, one JSON list per bucket, in a table of its own so that bucket rows
 * (read on every request) stay as they are; no row: no CORS configuration.
 */
function bucketCors(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('bucket_cors')
        .addColumn('bucket_id', c.idType, (col) => col.primaryKey().references('buckets.id'))
        .addColumn('rules', 'text', (col) => col.notNull())
        .execute();
    },
  };
}

/**
 * Case-insensitive search of file names (issue 25): each name folded
 * (db/folded-names.ts), stored beside it by every object write, and filled
 * in here for the files that exist. Folded in JavaScript because neither
 * dialect's SQL folds non-ASCII names the same way as the other.
 */
function foldedNames(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('name_folded', 'text').execute();
      for (;;) {
        const rows: { bucket_id: number; filename: string }[] = await db
          .selectFrom('objects')
          .select(['bucket_id', 'filename'])
          .where('name_folded', 'is', null)
          .limit(500)
          .execute();
        if (rows.length === 0) break;
        for (const row of rows) {
          await db
            .updateTable('objects')
            .set({ name_folded: foldName(row.filename) })
            .where('bucket_id', '=', row.bucket_id)
            .where('filename', '=', row.filename)
            .execute();
        }
      }
    },
  };
}

/**
 * One writer per resumable upload (issue 33), across instances: the request
 * writing an upload's bytes holds a lease on its row (its token and until
 * when, in ms since the epoch; renewed while it writes), and a newer request
 * sets `writer_wanted` to ask it to stop (domain/resumable-writers.ts).
 */
function resumableWriters(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('resumable_uploads').addColumn('writer', 'text').execute();
      await db.schema.alterTable('resumable_uploads').addColumn('writer_until', 'bigint').execute();
      await db.schema
        .alterTable('resumable_uploads')
        .addColumn('writer_wanted', 'integer', (col) => col.notNull().defaultTo(0))
        .execute();
    },
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001_initial': initial(dialect),
        '0002_inline_blobs': inlineBlobs(dialect),
        '0003_cache_epochs': cacheEpochs(),
        '0004_upload_reservations': uploadReservations(dialect),
        '0005_key_limits': keyLimits(),
        '0006_s3_credentials': s3Credentials(),
        '0007_object_metadata': objectMetadata(),
        '0008_multipart_uploads': multipartUploads(dialect),
        '0009_object_checksums': objectChecksums(),
        '0010_bucket_cors': bucketCors(dialect),
        '0011_multipart_checksums': multipartChecksums(),
        '0012_bucket_limits': bucketLimits(),
        '0013_folded_names': foldedNames(),
        '0014_resumable_uploads': resumableUploads(dialect),
        '0015_resumable_writers': resumableWriters(),
      };
    },
  };
}
