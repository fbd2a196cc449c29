/** The few differences between the dialects, for the migrations: column types and ids. */
import { sql, type ColumnDefinitionBuilder } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

export function columns(dialect: Dialect) {
  return {
    /** Increasing ids that are never reused (AUTOINCREMENT in SQLite). */
    id: (col: ColumnDefinitionBuilder) => (dialect === 'sqlite' ? col.primaryKey().autoIncrement() : col.primaryKey().generatedAlwaysAsIdentity()),
    idType: dialect === 'sqlite' ? ('integer' as const) : ('bigint' as const),
    /** Byte order, so listings sort the same way in both dialects. */
    binaryText: dialect === 'sqlite' ? sql`text` : sql`text collate "C"`,
    bytes: dialect === 'sqlite' ? ('blob' as const) : ('bytea' as const),
  };
}
