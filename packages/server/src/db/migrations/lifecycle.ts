/** Migration 0021: lifecycle rules per bucket and the lease their sweep runs under (issue 37). */
import { type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';

/**
 * A bucket's lifecycle rules as one JSON list (domain/lifecycle-rules.ts), in
 * a table of their own as bucket CORS is; no row: no configuration. And
 * background_leases: which instance runs a sweep that must run once at a time
 * (domain/lifecycle-sweep.ts), until when (ms since the epoch) unless renewed.
 */
export function lifecycle(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('bucket_lifecycle')
        .addColumn('bucket_id', c.idType, (col) => col.primaryKey().references('buckets.id'))
        .addColumn('rules', 'text', (col) => col.notNull())
        .execute();
      await db.schema
        .createTable('background_leases')
        .addColumn('name', 'text', (col) => col.primaryKey())
        .addColumn('holder', 'text', (col) => col.notNull())
        .addColumn('until_ms', c.idType, (col) => col.notNull())
        .execute();
    },
  };
}
