/** Migration 0017: S3 Block Public Access, per bucket. */
import { type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';

/**
 * A bucket's public access block (issue 35): S3's four switches, each 0 or
 * 1, in a table of their own as bucket CORS is; no row: no configuration
 * (every switch off). Anonymous reads join it (db/repositories/objects.ts).
 */
export function publicAccessBlocks(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('bucket_public_access_blocks')
        .addColumn('bucket_id', c.idType, (col) => col.primaryKey().references('buckets.id'))
        .addColumn('block_public_acls', 'integer', (col) => col.notNull())
        .addColumn('ignore_public_acls', 'integer', (col) => col.notNull())
        .addColumn('block_public_policy', 'integer', (col) => col.notNull())
        .addColumn('restrict_public_buckets', 'integer', (col) => col.notNull())
        .execute();
    },
  };
}
