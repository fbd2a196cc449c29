/** Migrations 0008–0016: multipart and resumable uploads, checksums, bucket CORS and limits, folded names, multipart objects. */
import { type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';
import { foldName } from '../folded-names.js';

/**
 * S3 multipart uploads (issue 24): an upload begun and not yet completed or
 * aborted, and the parts it keeps (each in the blob store under its own key,
 * counted against the owner's cap while kept: upload-reservations.ts).
 */
export function multipartUploads(dialect: Dialect): Migration {
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
 * Full-object checksums (issue 24): the flexible checksum an S3 upload sent
 * and had verified (x-amz-checksum-crc32 and kin), as JSON, to be returned
 * on GET and HEAD with x-amz-checksum-mode: ENABLED; null when none was sent.
 */
export function objectChecksums(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('checksums', 'text').execute();
    },
  };
}

/**
 * Bucket CORS (issue 24): a bucket's CORS rules as S3's PutBucketCors set
 * them, one JSON list per bucket, in a table of its own so that bucket rows
 * (read on every request) stay as they are; no row: no CORS configuration.
 */
export function bucketCors(dialect: Dialect): Migration {
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
 * Flexible checksums of multipart uploads (issue 24): the algorithm and type
 * CreateMultipartUpload chose (none: the upload keeps none), and each part's
 * checksum in that algorithm (base64), for the object's checksum at completion.
 */
export function multipartChecksums(): Migration {
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
export function bucketLimits(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('buckets').addColumn('max_file_bytes', 'bigint').execute();
      await db.schema.alterTable('buckets').addColumn('allowed_types', 'text').execute();
    },
  };
}

/**
 * Case-insensitive search of file names (issue 25): each name folded
 * (db/folded-names.ts), stored beside it by every object write, and filled
 * in here for the files that exist. Folded in JavaScript because neither
 * dialect's SQL folds non-ASCII names the same way as the other.
 */
export function foldedNames(): Migration {
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
 * Resumable (tus) uploads (issue 25): an upload created and not yet finished,
 * expired or terminated. Its declared length counts against the owner's cap
 * while it lives (holdings.ts); its bytes so far are in the blob store's
 * staging area under its id (blob/staging.ts).
 */
export function resumableUploads(dialect: Dialect): Migration {
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
 * One writer per resumable upload (issue 33), across instances: the request
 * writing an upload's bytes holds a lease on its row (its token and until
 * when, in ms since the epoch; renewed while it writes), and a newer request
 * sets `writer_wanted` to ask it to stop (domain/resumable-writers.ts).
 */
export function resumableWriters(): Migration {
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

/**
 * Multipart objects (issue 35): the multipart upload that made an object's
 * current version (so a repeated CompleteMultipartUpload finds its answer
 * while that version is current) and its parts (a JSON list of
 * [number, size, checksum?], for GetObject's partNumber and
 * GetObjectAttributes); both null for any other write, and for objects
 * completed before this migration, whose part sizes are unknown.
 */
export function multipartObjects(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('upload_id', 'text').execute();
      await db.schema.alterTable('objects').addColumn('parts', 'text').execute();
    },
  };
}
