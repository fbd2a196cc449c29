/**
 * The parts of a multipart object, kept with its version when its upload is
 * completed (multipart-complete.ts), for S3's reads by part number and
 * GetObjectAttributes. An object completed before Pail kept them (migration
 * 0016) has only its part count, the `-<parts>` of its ETag; its part sizes
 * are unknown, so it reads as one part, as any other object does.
 */
import { findObjectParts } from '../db/repositories/objects.js';
import type { ObjectRow } from '../db/schema.js';
import type { StoragePorts } from './ports.js';

export interface ObjectPart {
  /** Its number in the upload (the numbers a completion listed, so not always 1, 2, 3…). */
  number: number;
  size: number;
  /** Its checksum (base64) in the upload's algorithm; absent when the upload kept none. */
  checksum?: string;
}

/** The column's text: [[number, size, checksum?], …], a few bytes a part, as a completion may list 10,000. */
export const encodeParts = (parts: ObjectPart[]): string =>
  JSON.stringify(parts.map((part) => (part.checksum === undefined ? [part.number, part.size] : [part.number, part.size, part.checksum])));

function decodeParts(text: string): ObjectPart[] {
  return (JSON.parse(text) as [number, number, string?][]).map(([number, size, checksum]) => ({
    number,
    size,
    ...(checksum !== undefined ? { checksum } : {}),
  }));
}

export interface ObjectParts {
  count: number;
  /** Each part in order; null when not known (completed before migration 0016). */
  parts: ObjectPart[] | null;
}

/** What Pail knows of a version's parts; undefined when it was not made by a multipart upload. */
export async function partsOf(ports: Pick<StoragePorts, 'db'>, object: ObjectRow): Promise<ObjectParts | undefined> {
  // Only a multipart ETag ends in -<parts>: no other object needs the second read.
  const suffix = /-(\d+)$/.exec(object.etag);
  if (suffix === null) return undefined;
  const stored = await findObjectParts(ports.db, object.bucket_id, object.filename, object.storage_key);
  const parts = stored === null ? null : decodeParts(stored);
  return { count: parts?.length ?? Number(suffix[1]), parts };
}

export interface PartRead {
  /** The part's bytes in the object (inclusive); null for an empty object, which has no range to give. */
  range: { start: number; end: number } | null;
  /** How many parts the object has, when it was made by parts Pail knows. */
  count?: number;
}

/**
 * The bytes of part `number`, or null when the object has no such part. An
 * object not made by parts Pail knows is one part, all of its bytes (S3
 * answers part 1 of any object so; partsOf says why some multipart objects
 * are read so too).
 */
export async function partRead(ports: Pick<StoragePorts, 'db'>, object: ObjectRow, number: number): Promise<PartRead | null> {
  const known = (await partsOf(ports, object))?.parts;
  if (!known) {
    if (number !== 1) return null;
    return { range: object.size > 0 ? { start: 0, end: object.size - 1 } : null };
  }
  let start = 0;
  for (const part of known) {
    // (An empty last part of a larger object reads as an empty range: end before start.)
    if (part.number === number) return { range: object.size > 0 ? { start, end: start + part.size - 1 } : null, count: known.length };
    start += part.size;
  }
  return null;
}
