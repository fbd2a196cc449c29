/**
 * What is kept with a file beside its bytes: its type, the headers S3 stores
 * (Cache-Control, Content-Disposition, Content-Encoding, Content-Language,
 * Expires) and user metadata (x-amz-meta-*), one JSON object in
 * objects.metadata keyed by header name. Shown as a file's details, and
 * edited in place: the bytes and the ETag stay, the row is rewritten.
 */
import { STORED_HEADER_FIELDS, type EditFile, type FileDetails, type StoredHeaderField } from '@pail/shared';
import type { BucketRow, ObjectRow } from '../db/schema.js';
import { bucketRules, checkedType, TYPE_SNIFF_BYTES } from './bucket-rules.js';
import { errors } from './errors.js';
import { editObjectRow } from './object-edits.js';
import { objectBody } from './object-bytes.js';
import { decodeTags, tagMap } from './object-tags.js';
import { objectView } from './objects.js';
import { fileLockView, lockOf, refuseLockedEdit, type VersionLock } from './object-lock.js';
import type { StoragePorts } from './ports.js';

/** The headers kept besides x-amz-meta-*, in the order S3 lists them. */
export const STORED_HEADERS = ['content-disposition', 'content-encoding', 'content-language', 'cache-control', 'expires'] as const;
export const USER_METADATA_PREFIX = 'x-amz-meta-';
/** S3's limit on user metadata; Pail counts every stored header name and value in it. */
export const MAX_METADATA_BYTES = 2048;

const FIELD_HEADER: Record<StoredHeaderField, (typeof STORED_HEADERS)[number]> = {
  cache_control: 'cache-control',
  content_disposition: 'content-disposition',
  content_encoding: 'content-encoding',
  content_language: 'content-language',
  expires: 'expires',
};

/** Bytes of stored metadata as S3 counts them: every name and value in UTF-8. */
export const metadataBytes = (kept: Record<string, string>): number =>
  Object.entries(kept).reduce((total, [name, value]) => total + Buffer.byteLength(name) + Buffer.byteLength(value), 0);

/** The stored headers as kept, {} for none. */
export const storedHeadersOf = (object: Pick<ObjectRow, 'metadata'>): Record<string, string> =>
  object.metadata === null ? {} : (JSON.parse(object.metadata) as Record<string, string>);

export function fileDetails(storageHost: string, bucket: Pick<BucketRow, 'id' | 'storage_name'>, object: ObjectRow, lock: VersionLock): FileDetails {
  const stored = storedHeadersOf(object);
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored)) {
    if (name.startsWith(USER_METADATA_PREFIX)) metadata[name.slice(USER_METADATA_PREFIX.length)] = value;
  }
  const headers = Object.fromEntries(STORED_HEADER_FIELDS.map((field) => [field, stored[FIELD_HEADER[field]] ?? null])) as Record<
    StoredHeaderField,
    string | null
  >;
  return { ...objectView(storageHost, bucket, object), etag: object.etag, metadata, ...headers, tags: tagMap(decodeTags(object.tags)), ...fileLockView(lock) };
}

/** A file's details with its lock, as every door shows them. */
export async function fileDetailsOf(
  ports: Pick<StoragePorts, 'db' | 'storageHost'>,
  bucket: Pick<BucketRow, 'id' | 'storage_name'>,
  object: ObjectRow,
): Promise<FileDetails> {
  return fileDetails(ports.storageHost, bucket, object, await lockOf(ports.db, object.storage_key));
}

/** A header name's characters (RFC 9110 token); S3 keeps user metadata names in lower case. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** A header value may hold any text but control characters (tab aside): a line break would end the header. */
// eslint-disable-next-line no-control-regex -- matching control characters is the rule's whole point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** The stored headers an edit leaves: user metadata replaced when given, each header set, cleared (null) or kept (absent). */
function editedHeaders(current: Record<string, string>, edit: EditFile): Record<string, string> {
  const next: Record<string, string> = {};
  const userMetadata =
    edit.metadata === undefined
      ? Object.entries(current).filter(([name]) => name.startsWith(USER_METADATA_PREFIX))
      : Object.entries(edit.metadata).map(([name, value]) => [USER_METADATA_PREFIX + name.toLowerCase(), value] as const);
  for (const [name, value] of userMetadata) {
    const bare = name.slice(USER_METADATA_PREFIX.length);
    if (!TOKEN.test(bare)) throw errors.validation(`Metadata name "${bare}" must be letters, digits and !#$%&'*+.^_\`|~- only (it becomes a header name)`);
    if (CONTROL.test(value)) throw errors.validation(`Metadata value of "${bare}" must not contain control characters`);
    next[name] = value;
  }
  for (const field of STORED_HEADER_FIELDS) {
    const header = FIELD_HEADER[field];
    const value = edit[field] === undefined ? current[header] : edit[field];
    if (value === null || value === undefined || value.trim() === '') continue;
    if (CONTROL.test(value)) throw errors.validation(`${field} must not contain control characters`);
    next[header] = value.trim();
  }
  const size = metadataBytes(next);
  if (size > MAX_METADATA_BYTES) {
    throw errors.validation(`Metadata too large: ${size} bytes of names and values, at most ${MAX_METADATA_BYTES} (as S3)`);
  }
  return next;
}

/** A version replaced between the read and the rewrite is edited again, from what it is now; past this many, 409. */
/**
 * Rewrites a file's type, stored headers and user metadata; the bytes and
 * the ETag stay, updated_at moves (the file's headers changed). A new type
 * must be one the bucket takes, checked against the file's first bytes as
 * an upload's is (bucket-rules.ts). The rewrite applies to the version read:
 * a version that replaced it meanwhile is edited afresh (503 if that keeps
 * happening).
 */
export async function editObjectMetadata(
  ports: StoragePorts,
  bucket: BucketRow,
  filename: string,
  edit: EditFile & { content_type?: string },
  operation: string | null,
): Promise<FileDetails> {
  if (edit.metadata === undefined && edit.content_type === undefined && STORED_HEADER_FIELDS.every((field) => edit[field] === undefined)) {
    throw errors.validation(`Body must name at least one of metadata, content_type, ${STORED_HEADER_FIELDS.join(', ')}`);
  }
  const edited = await editObjectRow(ports, bucket, filename, operation, 'metadata was edited', async (current) => {
    if (bucket.object_lock === 1) await refuseLockedEdit(ports, current.storage_key);
    const headers = editedHeaders(storedHeadersOf(current), edit);
    let contentType = current.content_type;
    if (edit.content_type !== undefined && edit.content_type !== current.content_type) {
      contentType = await allowedType(ports, bucket, current, edit.content_type);
    }
    return ports.writes.editHeaders({
      bucketId: bucket.id,
      filename,
      storageKey: current.storage_key,
      contentType,
      metadata: Object.keys(headers).length === 0 ? null : JSON.stringify(headers),
      updatedAt: new Date(ports.clock.now()).toISOString(),
    });
  });
  return fileDetailsOf(ports, bucket, edited);
}

/** The new type, when the bucket takes it for these bytes (its allowed types, checked against the first bytes as on upload). */
async function allowedType(ports: StoragePorts, bucket: BucketRow, object: ObjectRow, declared: string): Promise<string> {
  const rules = await bucketRules(ports, bucket.id);
  if (rules.allowedTypes === null) return declared;
  const end = Math.min(object.size, TYPE_SNIFF_BYTES) - 1;
  const head = end < 0 ? Buffer.alloc(0) : await objectBody(ports, object, { start: 0, end });
  const bytes = Buffer.isBuffer(head) ? head : await collect(head);
  return checkedType(rules, declared, bytes);
}

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}
