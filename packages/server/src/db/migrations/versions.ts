/** Migration 0020: versioned buckets (issue 37): a bucket's versioning state, and its noncurrent versions and delete markers. */
import { type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';

/**
 * The current version of each file stays in `objects` (the hot paths are
 * unchanged), with its version id (null: S3's `null` version). Every other
 * kept version, and every delete marker, is a row of `object_versions`; its
 * `id` only grows, and every write to a bucket's versions is serialised by
 * the bucket (SQLite's one writer, PostgreSQL's bucket row lock), so a
 * higher id is a newer version even within one millisecond.
 */
export function versions(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('buckets')
        .addColumn('versioning', 'text', (col) => col.notNull().defaultTo('unversioned'))
        .execute();
      await db.schema
        .alterTable('buckets')
        .addColumn('noncurrent_bytes', c.idType, (col) => col.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('objects').addColumn('version_id', 'text').execute();
      await db.schema
        .createTable('object_versions')
        .addColumn('id', c.idType, c.id)
        .addColumn('bucket_id', c.idType, (col) => col.notNull().references('buckets.id'))
        .addColumn('filename', c.binaryText, (col) => col.notNull())
        .addColumn('version_id', 'text')
        // Null for a delete marker.
        .addColumn('storage_key', 'text')
        .addColumn('size', c.idType, (col) => col.notNull())
        .addColumn('content_type', 'text', (col) => col.notNull())
        .addColumn('etag', 'text', (col) => col.notNull())
        .addColumn('inline', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('metadata', 'text')
        .addColumn('checksums', 'text')
        .addColumn('tags', 'text')
        .addColumn('upload_id', 'text')
        .addColumn('parts', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        // When it stopped being current: lifecycle's NoncurrentDays count from here.
        .addColumn('noncurrent_at', 'text', (col) => col.notNull())
        .addColumn('is_delete_marker', 'integer', (col) => col.notNull().defaultTo(0))
        // Who made a delete marker (domain/principal.ts's kind:id), for the trash's who/when; null otherwise.
        .addColumn('deleted_by', 'text')
        .execute();
      await db.schema.createIndex('object_versions_by_name').on('object_versions').columns(['bucket_id', 'filename', 'id']).execute();
      await db.schema.createIndex('object_versions_by_version').on('object_versions').columns(['bucket_id', 'version_id']).execute();
      // Garbage collection asks which storage keys a row still refers to.
      await db.schema.createIndex('object_versions_by_key').on('object_versions').column('storage_key').execute();
      // Lifecycle's sweep finds what became noncurrent long enough ago.
      await db.schema.createIndex('object_versions_by_age').on('object_versions').columns(['bucket_id', 'noncurrent_at']).execute();
    },
  };
}
