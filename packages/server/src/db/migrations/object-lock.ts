/** Migration 0024: object lock (issue 38). */
import { type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';

/**
 * A bucket made with object lock, and its default retention. A version's
 * retention and legal hold are rows of their own, keyed by the version's
 * storage key (unique to one version for good, whether the version is
 * current or not), so a version keeps its lock whichever table holds its
 * row; they are written in the commit that makes the version. A multipart
 * upload keeps the lock its creation asked for, for the object it completes.
 */
export function objectLock(dialect: Dialect): Migration {
  const { binaryText } = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('buckets')
        .addColumn('object_lock', 'integer', (col) => col.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('buckets').addColumn('lock_default_mode', 'text').execute();
      await db.schema.alterTable('buckets').addColumn('lock_default_days', 'integer').execute();
      await db.schema.alterTable('buckets').addColumn('lock_default_years', 'integer').execute();
      await db.schema.alterTable('multipart_uploads').addColumn('lock', 'text').execute();
      await db.schema
        .createTable('version_locks')
        .addColumn('storage_key', 'text', (col) => col.primaryKey())
        .addColumn('bucket_id', 'integer', (col) => col.notNull())
        .addColumn('filename', binaryText, (col) => col.notNull())
        .addColumn('mode', 'text')
        .addColumn('retain_until', 'text')
        .addColumn('legal_hold', 'integer', (col) => col.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('version_locks_bucket').on('version_locks').columns(['bucket_id', 'retain_until']).execute();
    },
  };
}
