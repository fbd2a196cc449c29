/**
 * Moving and renaming files and folders, within a bucket or into another of
 * the owner's buckets. A move writes no byte: one transaction re-points the
 * file's row to its new bucket and name (db/object-writes/), so a crash
 * leaves it under its old name or its new one, never both and never
 * neither. Its bytes keep their key: a blob key starts with the storage name
 * of the bucket it was uploaded to, but nothing reads a bucket from a key
 * (garbage collection asks whether any row refers to a key, a bucket's purge
 * goes by its rows), so the key stays valid wherever the row goes.
 *
 * A folder (`from` ending in `/`) moves file by file, each in its own
 * transaction, after every file was checked (its new name, the target
 * bucket's limits, names taken): a refusal then moves nothing. Interrupted
 * (a crash, a refusal that came up meanwhile), the same request again moves
 * what is left, as the files already moved are no longer under `from`.
 */
import { filenameProblem, isFolderMarker, type MoveResult } from '@pail/shared';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { WriteRefused } from '../db/object-writes/object-writes.js';
import { findObjectRow, listObjectRows, takenNames } from '../db/repositories/objects.js';
import type { BucketRow, ObjectRow } from '../db/schema.js';
import { bucketRules, checkedType, NO_RULES, TYPE_SNIFF_BYTES, type BucketRules } from './bucket-rules.js';
import { getOwnBucket, getOwnBucketFor } from './buckets.js';
import { errors } from './errors.js';
import { lockForNewVersion, refuseLockedRemoval, removalGuard, type BucketLockRule } from './object-lock.js';
import { objectBody, retireVersions } from './object-bytes.js';
import { requireObject } from './objects.js';
import type { StoragePorts } from './ports.js';
import type { AccountPrincipal } from './principal.js';
import { newVersionId, principalTag } from './version-ids.js';
import { createdEventName, outboxFor, removedChange } from './webhook-events.js';

export interface MoveRequest {
  from: string;
  to: string;
  to_bucket_id?: number;
  overwrite?: boolean;
}

/** Rows read and moved per page of a folder. */
const PAGE = 500;

/** A move's two ends, checked: the buckets, the names, and what the target bucket asks of a file. */
interface Move {
  source: BucketRow;
  target: BucketRow;
  from: string;
  to: string;
  folder: boolean;
  overwrite: boolean;
  /** The target's limits when it is another bucket; a file already in a bucket is not asked again for a rename. */
  rules: BucketRules;
  /** The target's object lock: a file moved there gets its default retention, as an upload there would. */
  lock: BucketLockRule;
  operation: string | null;
  /** Who moves it (a versioned bucket's delete marker at the old name keeps it). */
  by: string | null;
}

/**
 * Moves a file, or a folder with everything in it. The door authorized the
 * action on the source bucket (moveObject: read, write and delete); the
 * target bucket must be one the principal may write to.
 */
export async function moveFiles(
  ports: StoragePorts,
  principal: AccountPrincipal,
  rawBucketId: string,
  request: MoveRequest,
  operation?: string,
): Promise<MoveResult> {
  const source = await getOwnBucket(ports.db, principal.user.id, rawBucketId);
  const target =
    request.to_bucket_id === undefined || request.to_bucket_id === source.id
      ? source
      : await getOwnBucketFor(ports.db, principal, request.to_bucket_id, 'writeObject');
  const move = { ...(await parseMove(ports, source, target, request, operation ?? null)), by: principalTag(principal) };
  const moved = move.folder ? await moveFolder(ports, move) : await moveFile(ports, move);
  return { moved, bucket_id: source.id, from: move.from, to_bucket_id: target.id, to: move.to };
}

async function parseMove(ports: StoragePorts, source: BucketRow, target: BucketRow, request: MoveRequest, operation: string | null): Promise<Omit<Move, 'by'>> {
  const from = parseName('from', request.from);
  const to = parseName('to', request.to);
  const folder = isFolderMarker(from);
  if (folder !== isFolderMarker(to)) {
    throw errors.validation(folder ? 'to must end in / when from is a folder' : 'to must not end in / when from is a file (a name ending in / is a folder)');
  }
  if (source.id === target.id) {
    if (from === to) throw errors.validation('from and to are the same name');
    if (folder && (to.startsWith(from) || from.startsWith(to))) throw errors.validation('A folder cannot move into itself, nor onto a folder that holds it');
  }
  const targetRules = await bucketRules(ports, target.id);
  const rules = source.id === target.id ? NO_RULES : targetRules;
  return { source, target, from, to, folder, overwrite: request.overwrite === true, rules, lock: targetRules.lock, operation };
}

function parseName(field: 'from' | 'to', raw: string): string {
  const problem = filenameProblem(raw);
  if (problem) throw errors.validation(`${field}: ${problem}`);
  return raw;
}

async function moveFile(ports: StoragePorts, move: Move): Promise<number> {
  const row = await requireObject(ports, move.source, move.from);
  const contentType = await typeInTarget(ports, move, row);
  // Asked first so a refusal is answered before anything is read; the move's transaction asks again.
  if (!move.overwrite && (await findObjectRow(ports.db, move.target.id, move.to))) throw errors.fileExists(move.to);
  await moveOne(ports, move, row, move.to, contentType);
  return 1;
}

/** The name a file under the folder `from` takes under `to`. */
const renamed = (move: Move, filename: string): string => move.to + filename.slice(move.from.length);

/**
 * Every file under the folder, checked, then moved one transaction each.
 * Nothing under `from` (a move already finished): 0 moved, as a repeated
 * request finds it.
 */
async function moveFolder(ports: StoragePorts, move: Move): Promise<number> {
  // Types the target bucket gives files (by version): rare, as only a generic type changes.
  const types = new Map<string, string>();
  for (let after: string | undefined, rows: ObjectRow[]; (rows = await page(ports, move, after)).length > 0; after = rows.at(-1)!.filename) {
    const names = rows.map((row) => renamed(move, row.filename));
    names.forEach((name, index) => {
      const problem = filenameProblem(name);
      if (problem) throw errors.validation(`${rows[index]!.filename} cannot be named ${name}: ${problem}`);
    });
    for (const row of rows) {
      const type = await typeInTarget(ports, move, row);
      if (type !== undefined) types.set(row.storage_key, type);
    }
    if (!move.overwrite) {
      const taken = await takenNames(ports.db, move.target.id, names);
      // An empty folder marker never stands in the way: the folders merge.
      const clash = names.find((name) => taken.has(name) && !isFolderMarker(name));
      if (clash !== undefined) throw errors.fileExists(clash);
    }
  }
  let moved = 0;
  for (let after: string | undefined, rows: ObjectRow[]; (rows = await page(ports, move, after)).length > 0; after = rows.at(-1)!.filename) {
    for (const row of rows) {
      const to = renamed(move, row.filename);
      // A version that came after the check (replaced meanwhile) is checked now.
      const type = types.has(row.storage_key) ? types.get(row.storage_key) : await typeInTarget(ports, move, row);
      if (await moveOne(ports, move, row, to, type)) moved += 1;
      // On SQLite a move never waits for I/O: a turn of the event loop between files lets other requests in.
      await nextTurn();
    }
  }
  return moved;
}

const page = (ports: StoragePorts, move: Move, after: string | undefined): Promise<ObjectRow[]> =>
  listObjectRows(ports.db, move.source.id, { prefix: move.from, after, limit: PAGE });

/**
 * Whether the target bucket takes the file, as an upload of it would be
 * taken (bucket-rules.ts): its size, and its type as declared and as its
 * first bytes say. Returns the type it takes there when that is another
 * (a generic type becomes the detected one); undefined: unchanged.
 */
async function typeInTarget(ports: StoragePorts, move: Move, row: ObjectRow): Promise<string | undefined> {
  const { rules } = move;
  if (rules.maxFileBytes !== null && row.size > rules.maxFileBytes) throw errors.fileTooLarge(rules.maxFileBytes);
  if (rules.allowedTypes === null || isFolderMarker(row.filename)) return undefined;
  const type = await checkedType(rules, row.content_type, await firstBytes(ports, row));
  return type === row.content_type ? undefined : type;
}

async function firstBytes(ports: StoragePorts, row: ObjectRow): Promise<Buffer> {
  const length = Math.min(row.size, TYPE_SNIFF_BYTES);
  if (length === 0) return Buffer.alloc(0);
  const body = await objectBody(ports, row, { start: 0, end: length - 1 });
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * One file's move, then its announcements: removed from its old name,
 * created under the new one (caches forget both names; the bytes stay
 * cached), and an overwritten version's bytes retired. False when the file
 * had gone meanwhile (a folder's file deleted while it moved).
 */
async function moveOne(ports: StoragePorts, move: Move, listed: ObjectRow, to: string, contentType: string | undefined): Promise<boolean> {
  const { source, target } = move;
  let row: ObjectRow | undefined = listed;
  let moved;
  for (;;) {
    // A move takes the version from its name (a locked one stays where it was locked: asked in the move's transaction, so
    // a lock set meanwhile is seen), and an overwrite outside a versioned bucket removes the version at the new name:
    // neither while locked (object-lock.ts).
    // Asked whatever the source's row says of lock (it may be older than lock turned on there).
    const lockGuard = removalGuard(ports.clock);
    const replacing = move.overwrite && target.object_lock === 1 && target.versioning !== 'enabled' ? await findObjectRow(ports.db, target.id, to) : undefined;
    if (replacing) await refuseLockedRemoval(ports, replacing.storage_key);
    // The version under its new name is a new one there: the target's default retention from now, as any upload's.
    const lock = lockForNewVersion(move.lock, undefined, ports.clock.now());
    try {
      const outbox = await moveOutbox(ports, move, row, to);
      moved = await ports.writes.moveVersion({
        ownerId: source.owner_id,
        from: { bucketId: source.id, filename: row.filename, storageKey: row.storage_key },
        to: { bucketId: target.id, filename: to },
        // Folder markers are empty: one on the other is the same folder.
        overwrite: move.overwrite || isFolderMarker(to),
        versionId: newVersionId(),
        markerVersionId: newVersionId(),
        movedBy: move.by,
        ...(contentType !== undefined ? { contentType } : {}),
        ...(outbox.length > 0 ? { outbox } : {}),
        lockGuard,
        ...(lock !== undefined ? { lock } : {}),
      });
      break;
    } catch (error) {
      if (!(error instanceof WriteRefused)) throw error;
      if (error.refusal === 'exists') throw errors.fileExists(to);
      if (error.refusal !== 'no-file') throw errors.bucketNotFound();
      // Replaced since it was read: the new version moves (its type asked again); deleted: nothing to move.
      const now = await findObjectRow(ports.db, source.id, row.filename);
      if (!now) {
        if (move.folder) return false;
        throw errors.fileNotFound();
      }
      contentType = await typeInTarget(ports, move, now);
      row = now;
    }
  }
  const { replaced } = moved;
  await ports.events.announce({
    type: 'object-removed',
    ownerId: source.owner_id,
    bucketId: source.id,
    bucketStorageName: source.storage_name,
    filename: row.filename,
    storageKey: row.storage_key,
    size: row.size,
    etag: row.etag,
    cause: 'moved',
    operation: move.operation,
  });
  await ports.events.announce({
    type: 'object-created',
    ownerId: target.owner_id,
    bucketId: target.id,
    bucketStorageName: target.storage_name,
    filename: to,
    storageKey: moved.row.storage_key,
    size: moved.row.size,
    etag: moved.row.etag,
    contentType: moved.row.content_type,
    replaced: replaced?.storage_key ?? null,
    cause: 'moved',
    operation: move.operation,
  });
  if (moved.retired.length > 0) await retireVersions(ports, moved.retired);
  return true;
}

/**
 * Issue 39: a move's webhook events, written in its transaction: removed from the old name (a delete marker there in
 * a versioned bucket), created (a copy, to S3) under the new one. The commit fills in the versions each made.
 */
async function moveOutbox(ports: StoragePorts, move: Move, row: ObjectRow, to: string) {
  const principal = `user:${move.source.owner_id}`;
  const marker = move.source.versioning !== 'unversioned';
  const removed = (await outboxFor(ports, move.source.id, [removedChange(row.filename, principal, { marker })])) ?? [];
  const created =
    (await outboxFor(ports, move.target.id, [
      { event: 'object.created', eventName: createdEventName(move.operation, 'moved'), key: to, size: row.size, etag: row.etag, principal },
    ])) ?? [];
  return [...removed, ...created];
}
