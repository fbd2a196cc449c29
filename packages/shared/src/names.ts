/**
 * The naming rules for buckets and files. They live here so the server, the
 * dashboard (which checks as the user types) and the SDK all apply the same rule.
 * Each check returns null when the value is fine, or the reason it is not.
 */
export const BUCKET_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{1,38}[a-z0-9]$/;

export function bucketNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'Bucket name is required';
  const wrong = unfitBucketNameChars(name);
  if (wrong) return `Bucket name may contain only lowercase letters, digits, hyphens and underscores: it has ${wrong}`;
  if (name.length < 3 || name.length > 40) return 'Bucket name must be 3 to 40 characters long';
  if (!BUCKET_NAME_PATTERN.test(name)) return 'Bucket name must start and end with a lowercase letter or digit';
  return null;
}

/** What in `name` no bucket name may have, in words: `uppercase letters (M, B), a space and “!”`; null when nothing. */
function unfitBucketNameChars(name: string): string | null {
  const upper = new Set<string>();
  const others = new Set<string>();
  let spaces = 0;
  for (const char of name) {
    if (/[a-z0-9_-]/.test(char)) continue;
    if (char === ' ') spaces++;
    else if (/^[A-Z]$/.test(char)) upper.add(char);
    else others.add(char);
  }
  const parts: string[] = [];
  if (upper.size > 0) parts.push(`${upper.size === 1 ? 'an uppercase letter' : 'uppercase letters'} (${[...upper].join(', ')})`);
  if (spaces > 0) parts.push(spaces === 1 ? 'a space' : 'spaces');
  if (others.size > 0)
    parts.push(
      [...others]
        .map((char) => (/\s/.test(char) || isUnfitText(char) ? `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : `“${char}”`))
        .join(', '),
    );
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

const MAX_FILENAME_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;
// Half of a UTF-16 surrogate pair cannot be encoded as UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex -- matching control characters is the rule's whole point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
/** Text that no filename can be: a control character, or half of a surrogate pair (no UTF-8 for it). */
export const isUnfitText = (text: string): boolean => CONTROL_CHARS.test(text) || LONE_SURROGATE.test(text);
const utf8Length = (text: string): number => new TextEncoder().encode(text).length;

/** A name ending in `/` keeps its folder in existence: an empty object, as S3 consoles make them. */
export const isFolderMarker = (filename: string): boolean => filename.endsWith('/');

/**
 * A filename is a path: segments joined by `/` (folders), 1 to 1024 bytes of
 * UTF-8 in all, each segment 1 to 255 bytes and not `.` or `..`; a trailing
 * `/` only for a folder marker.
 */
export function filenameProblem(filename: unknown): string | null {
  if (typeof filename !== 'string' || filename.length === 0) return 'Filename is required';
  if (LONE_SURROGATE.test(filename)) return 'Filename must be valid UTF-8';
  if (utf8Length(filename) > MAX_FILENAME_BYTES) return `Filename must be at most ${MAX_FILENAME_BYTES} bytes of UTF-8`;
  if (filename.includes('\\')) return 'Filename must not contain \\';
  if (CONTROL_CHARS.test(filename)) return 'Filename must not contain control characters';
  const segments = (isFolderMarker(filename) ? filename.slice(0, -1) : filename).split('/');
  for (const segment of segments) {
    if (segment === '') return 'Filename must not start with / or contain an empty folder name (//)';
    if (segment === '.' || segment === '..') return 'Filename must not contain . or .. as a folder or file name';
    if (utf8Length(segment) > MAX_SEGMENT_BYTES) return `Each part of a filename between slashes must be at most ${MAX_SEGMENT_BYTES} bytes of UTF-8`;
  }
  return null;
}

/** S3's limits on a file's tags (the server's domain/object-tags.ts checks them; clients may say so before asking). */
export const MAX_FILE_TAGS = 10;
export const MAX_TAG_KEY_LENGTH = 128;
export const MAX_TAG_VALUE_LENGTH = 256;
