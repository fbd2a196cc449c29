/**
 * Tags on objects and buckets (S3's tagging): key-value pairs with S3's
 * limits, kept as canonical JSON — [[key, value], …] sorted by key in byte
 * order, as S3 lists them — in the object's row (written in the commit that
 * makes the version, or rewritten in place) and in the bucket's row. Doors
 * translate their formats (XML, x-amz-tagging) to a Tag list; the rules live here.
 */
import type { BucketRow, Db, ObjectRow } from '../db/schema.js';
import { findBucketTags, saveBucketTags } from '../db/repositories/bucket-tags.js';
import { errors } from './errors.js';
import { announceEdit, editObjectRow } from './object-edits.js';
import { versionOrCurrent } from './version-lookup.js';

import type { StoragePorts } from './ports.js';

export interface Tag {
  key: string;
  value: string;
}

/** S3's limits: tags per object and per bucket, and a key's and a value's length in Unicode characters. */
export const MAX_OBJECT_TAGS = 10;
export const MAX_BUCKET_TAGS = 50;
export const MAX_TAG_KEY_CHARACTERS = 128;
export const MAX_TAG_VALUE_CHARACTERS = 256;

/** Characters, not UTF-16 units: an emoji is one, as S3 counts. */
const characters = (text: string): number => [...text].length;

/** Why S3 refuses this tag set (its InvalidTag messages), or null when it may be kept. */
export function tagRefusal(tags: readonly Tag[], on: 'object' | 'bucket'): string | null {
  if (on === 'object' && tags.length > MAX_OBJECT_TAGS) return `Object tags cannot be greater than ${MAX_OBJECT_TAGS}`;
  if (on === 'bucket' && tags.length > MAX_BUCKET_TAGS) return `Bucket tag count cannot be greater than ${MAX_BUCKET_TAGS}`;
  const seen = new Set<string>();
  for (const { key, value } of tags) {
    if (characters(key) < 1) return 'The TagKey you have provided is invalid';
    if (characters(key) > MAX_TAG_KEY_CHARACTERS) return `The TagKey you have provided is too long, max ${MAX_TAG_KEY_CHARACTERS}`;
    if (characters(value) > MAX_TAG_VALUE_CHARACTERS) return `The TagValue you have provided is too long, max ${MAX_TAG_VALUE_CHARACTERS}`;
    if (key.toLowerCase().startsWith('aws:')) return 'Your TagKey cannot be prefixed with aws:';
    if (seen.has(key)) return 'Cannot provide multiple Tags with the same key';
    seen.add(key);
  }
  return null;
}

/** The tags as kept (canonical JSON), null for none; refused (400) past S3's limits. */
export function encodeTags(tags: readonly Tag[], on: 'object' | 'bucket' = 'object'): string | null {
  const refusal = tagRefusal(tags, on);
  if (refusal !== null) throw errors.validation(refusal);
  if (tags.length === 0) return null;
  const sorted = [...tags].sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
  return JSON.stringify(sorted.map(({ key, value }) => [key, value]));
}

export function decodeTags(json: string | null): Tag[] {
  return json === null ? [] : (JSON.parse(json) as [string, string][]).map(([key, value]) => ({ key, value }));
}

/** How many tags a row keeps, without decoding them (x-amz-tagging-count on every read). */
export const tagCount = (json: string | null): number => (json === null ? 0 : (JSON.parse(json) as unknown[]).length);

/** Tags as the Pail API shows them, `{key: value}` in the kept (byte) order. */
export const tagMap = (tags: readonly Tag[]): Record<string, string> => Object.fromEntries(tags.map(({ key, value }) => [key, value]));

/** A `{key: value}` object as a tag list, to be checked and kept as any other. */
export const tagsOfMap = (map: Readonly<Record<string, string>>): Tag[] => Object.entries(map).map(([key, value]) => ({ key, value }));

/**
 * Replaces a version's tags (an empty list: removes them) and answers them as
 * kept, with the version's id: the current version's, or the one
 * `versionId` names (a noncurrent one is edited where it is kept). Its bytes,
 * ETag and Last-Modified stay; every instance sees the change at once
 * (object-edited on the commit seam, as a metadata edit announces it). A
 * delete marker has no tags (DeleteMarkerNamed, version-lookup.ts).
 */
export async function setObjectTags(
  ports: StoragePorts,
  bucket: BucketRow,
  filename: string,
  tags: readonly Tag[],
  operation: string | null,
  versionId?: string,
): Promise<{ tags: Tag[]; versionId: string | null }> {
  const encoded = encodeTags(tags);
  const found = await versionOrCurrent(ports, bucket, filename, versionId);
  let edited: ObjectRow;
  if (versionId === undefined) {
    // The current version, whichever it is by the time the edit lands.
    edited = await editObjectRow(ports, bucket, filename, operation, 'tags were set', (current) =>
      ports.writes.editTags({ bucketId: bucket.id, filename, storageKey: current.storage_key, tags: encoded }),
    );
  } else {
    // That version, current or kept: a write displacing it meanwhile leaves it the same version.
    const row = await ports.writes.editTags({ bucketId: bucket.id, filename, storageKey: found.object.storage_key, tags: encoded, orKept: true });
    if (!row) throw errors.versionNotFound();
    await announceEdit(ports, bucket, row, operation);
    edited = row;
  }
  return { tags: decodeTags(edited.tags), versionId: edited.version_id ?? null };
}

/** A version's tags and id: the current version's, or the one `versionId` names (as setObjectTags finds it). */
export async function objectTags(
  ports: Pick<StoragePorts, 'db'>,
  bucket: Pick<BucketRow, 'id' | 'versioning'>,
  filename: string,
  versionId?: string,
): Promise<{ tags: Tag[]; versionId: string | null }> {
  const { object } = await versionOrCurrent(ports, bucket, filename, versionId);
  return { tags: decodeTags(object.tags), versionId: object.version_id ?? null };
}

/** The bucket's tags; null when it has none (S3's NoSuchTagSet). */
export async function getBucketTags(db: Db, bucketId: number): Promise<Tag[] | null> {
  const json = await findBucketTags(db, bucketId);
  return json === null ? null : decodeTags(json);
}

/** Replaces the bucket's tags (an empty list: removes them). */
export async function setBucketTags(db: Db, bucketId: number, tags: readonly Tag[]): Promise<void> {
  await saveBucketTags(db, bucketId, encodeTags(tags, 'bucket'));
}
