/**
 * The naming rules for buckets and files. They live here so the server, the
 * dashboard (which checks as the user types) and the SDK all apply the same rule.
 * Each check returns null when the value is fine, or the reason it is not.
 */
export const BUCKET_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{1,38}[a-z0-9]$/;

export function bucketNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'Bucket name is required';
  if (name.length < 3 || name.length > 40) return 'Bucket name must be 3 to 40 characters long';
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) {
    return 'Bucket name must start and end with a lowercase letter or digit';
  }
  if (!BUCKET_NAME_PATTERN.test(name)) {
    return 'Bucket name may contain only lowercase letters, digits, hyphens and underscores';
  }
  return null;
}

const MAX_FILENAME_BYTES = 255;
// C0 controls, DEL and C1 controls.
// Half of a UTF-16 surrogate pair cannot be encoded as UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex -- matching control characters is the rule's whole point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

export function filenameProblem(filename: unknown): string | null {
  if (typeof filename !== 'string' || filename.length === 0) return 'Filename is required';
  if (new TextEncoder().encode(filename).length > MAX_FILENAME_BYTES) {
    return 'Filename must be at most 255 bytes of UTF-8';
  }
  if (filename.includes('/') || filename.includes('\\')) return 'Filename must not contain / or \\';
  if (CONTROL_CHARS.test(filename)) return 'Filename must not contain control characters';
  if (filename === '.' || filename === '..') return 'Filename must not be . or ..';
  if (LONE_SURROGATE.test(filename)) return 'Filename must be valid UTF-8';
  return null;
}
