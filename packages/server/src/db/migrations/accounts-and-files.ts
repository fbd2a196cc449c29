/** Migrations 0001–0007: users, keys, buckets and files, small files inline, cache epochs, upload reservations, object metadata. */
import { sql, type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';

export function initial(dialect: Dialect): Migration {
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
export function inlineBlobs(dialect: Dialect): Migration {
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
export function cacheEpochs(): Migration {
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
export function uploadReservations(dialect: Dialect): Migration {
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
export function keyLimits(): Migration {
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
export function s3Credentials(): Migration {
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
export function objectMetadata(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('metadata', 'text').execute();
    },
  };
}
