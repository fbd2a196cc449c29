/**
 * Opens the metadata database chosen by configuration and brings its schema
 * up to date. PostgreSQL migrations run under Kysely's advisory lock, so
 * instances starting together never race.
 */
import { Migrator, sql } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { migrationProvider, type Dialect } from './migrations.js';
import type { OpenDatabase, OpenOptions } from './open-database.js';
import { openPostgres } from './postgres.js';
import type { Db } from './schema.js';
import { openSqlite } from './sqlite.js';

export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): OpenDatabase {
  switch (config.kind) {
    case 'sqlite':
      return openSqlite(config.file, options);
    case 'postgres':
      return openPostgres(config.url);
  }
}

export async function migrateToLatest(db: Db, dialect: Dialect): Promise<string[]> {
  // Kysely looks for its migration tables in every schema unless told which one,
  // so a second Pail (or any Kysely app) in another schema of the same database
  // would make it skip creating them here. Pin them to the schema we write to.
  const migrationTableSchema =
    dialect === 'postgres' ? ((await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)).rows[0]?.schema ?? undefined) : undefined;
  const migrator = new Migrator({ db, provider: migrationProvider(dialect), migrationTableSchema });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    // Kysely looks for its tables in every schema of the database, naming each column of
    // each table; a schema, table or column that another session drops or renames meanwhile
    // (another Pail migrating or removed in its own schema) fails that look-up. Migrating
    // is idempotent under its lock, so it is simply tried again.
    if (changedMeanwhile(error) && attempt < 10) {
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
      continue;
    }
    throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  }
}

/** PostgreSQL's invalid_schema_name, undefined_table and undefined_column. */
const CHANGED_MEANWHILE = new Set(['3F000', '42P01', '42703']);

/** Those, or the catalog's own "cache lookup failed" (XX000) for a schema dropped while it was being read. */
function changedMeanwhile(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return CHANGED_MEANWHILE.has(String(code)) || (code === 'XX000' && String(message).startsWith('cache lookup failed'));
}
