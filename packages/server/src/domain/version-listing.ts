/**
 * S3's ListObjectVersions over a bucket's versions (current ones and kept
 * ones alike): names ascending, each name's newest first, paged by a key and
 * version-id marker, names under a deeper prefix folded into one common
 * prefix as the other listings fold them (objects.ts).
 */
import { listVersionPage, versionOrder, type VersionEntry } from '../db/repositories/object-versions.js';
import type { BucketRow } from '../db/schema.js';
import type { StoragePorts } from './ports.js';
import { pastPrefix } from '../db/name-ranges.js';
import { storedVersionId } from './version-ids.js';

export interface VersionListQuery {
  prefix: string;
  delimiter: string | undefined;
  keyMarker: string;
  versionIdMarker: string;
  maxKeys: number;
}

export interface VersionListPage {
  versions: VersionEntry[];
  prefixes: string[];
  /** Where the next page starts, when there is one: the last entry's name (or common prefix) and version. */
  next: { keyMarker: string; versionIdMarker: string | null } | null;
}

export async function listVersionsPage(ports: Pick<StoragePorts, 'db'>, bucket: Pick<BucketRow, 'id'>, query: VersionListQuery): Promise<VersionListPage> {
  const { prefix, delimiter, maxKeys } = query;
  if (maxKeys === 0) return { versions: [], prefixes: [], next: null };
  let start: { afterName?: string; afterOrder?: number; fromName?: string | null } = {};
  if (query.keyMarker !== '') {
    const order = query.versionIdMarker === '' ? undefined : await versionOrder(ports.db, bucket.id, query.keyMarker, storedVersionId(query.versionIdMarker));
    // A common prefix as the marker continues after every name under it.
    start =
      delimiter !== undefined && query.keyMarker.endsWith(delimiter) && order === undefined
        ? { fromName: pastPrefix(query.keyMarker) }
        : { afterName: query.keyMarker, ...(order !== undefined ? { afterOrder: order } : {}) };
  }
  const entries: ({ version: VersionEntry } | { prefix: string })[] = [];
  let skipping: string | undefined;
  // fromName null: no name comes after the folded prefix.
  while (entries.length <= maxKeys && start.fromName !== null) {
    const { fromName, ...after } = start;
    const rows = await listVersionPage(ports.db, bucket.id, { prefix, ...after, ...(fromName != null ? { fromName } : {}), limit: maxKeys + 1 });
    for (const row of rows) {
      if (skipping !== undefined && row.filename.startsWith(skipping)) continue;
      skipping = undefined;
      const at = delimiter === undefined ? -1 : row.filename.slice(prefix.length).indexOf(delimiter);
      if (at === -1) entries.push({ version: row });
      else {
        skipping = row.filename.slice(0, prefix.length + at + delimiter!.length);
        entries.push({ prefix: skipping });
      }
      if (entries.length > maxKeys) break;
    }
    const last = rows[rows.length - 1];
    if (rows.length <= maxKeys || last === undefined) break;
    start = skipping !== undefined ? { fromName: pastPrefix(skipping) } : { afterName: last.filename, afterOrder: last.order };
  }
  const page = entries.slice(0, maxKeys);
  const lastEntry = page[page.length - 1];
  const next =
    entries.length > maxKeys && lastEntry
      ? 'version' in lastEntry
        ? { keyMarker: lastEntry.version.filename, versionIdMarker: lastEntry.version.version_id ?? 'null' }
        : { keyMarker: lastEntry.prefix, versionIdMarker: null }
      : null;
  return {
    versions: page.flatMap((entry) => ('version' in entry ? [entry.version] : [])),
    prefixes: page.flatMap((entry) => ('prefix' in entry ? [entry.prefix] : [])),
    next,
  };
}
