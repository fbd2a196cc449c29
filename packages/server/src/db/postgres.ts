/** The shared backend: a PostgreSQL pool. Commits are durable when they return. */
import { Kysely, PostgresDialect } from 'kysely';
import type { Pool } from 'pg';
import type { OpenDatabase } from './open-database.js';
import { postgresObjectWrites } from './object-writes/postgres.js';
import type { Database } from './schema.js';

export function openPostgres(url: string): OpenDatabase {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: () => openPool(url) }) });
  return {
    db,
    dialect: 'postgres',
    writes: postgresObjectWrites(db),
    durable: async () => {},
    committedElsewhere: null,
    close: () => db.destroy(),
  };
}

/**
 * Made by Kysely on the first query. The driver is loaded here, not with this
 * module, so a process on the embedded backend (the server's default, the
 * CLI) never loads it.
 */
async function openPool(url: string): Promise<Pool> {
  const { default: pg } = await import('pg');
  // int8 (bigint) as a JS number: byte counts stay far below 2^53.
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({
    connectionString: url,
    max: 20,
    // A database that is down or restarting fails a request within seconds instead of hanging it:
    // connecting gives up after 3 s, a query with no answer after 5 s (Pail's queries take milliseconds).
    connectionTimeoutMillis: 3_000,
    query_timeout: 5_000,
    keepAlive: true,
    types,
  });
  // An idle connection that dies (PostgreSQL restarted or failed over) is
  // reported here; unheard, the 'error' event would end the process. The pool
  // drops that connection and the next query opens a new one.
  pool.on('error', () => {});
  return pool;
}
