/**
 * How a filename goes into a URL path. A `/` in a filename makes folders
 * (`photos/2026/cat.jpg`), and the server takes the whole rest of the path as
 * the name, so each segment is percent-encoded and the slashes stay literal:
 * the URL then reads like the file's own `url`, and proxies and logs see the
 * folders.
 */
import { ValidationError } from './errors.js';

function refuse(message: string): never {
  throw new ValidationError(message, { status: 400, code: 'ValidationError' });
}

/**
 * Segments a URL cannot carry as they are (`.` and `..`, which URL parsing
 * resolves away, so the request would reach another file or route) are refused
 * here with the error the server gives for such names. An empty name is too.
 * Every other rule is the server's to check.
 */
function checked(filename: string): string[] {
  if (typeof filename !== 'string' || filename === '') refuse('Filename is required');
  const segments = filename.split('/');
  if (segments.some((segment) => segment === '.' || segment === '..')) {
    refuse(filename === '.' || filename === '..' ? 'Filename must not be . or ..' : 'Filename must not contain . or .. as a folder or file name');
  }
  return segments;
}

/**
 * Words the server reads after a filename as an operation on the file
 * (`…/files/a/b/tags` is the tags of `a/b`; on a DELETE, `…/a/b/delete` deletes
 * `a/b`). A file whose last segment is one of them is sent with its slashes as
 * `%2F` (`a%2Ftags`), which the server reads as one name.
 */
const SUFFIX_WORDS = new Set(['delete', 'tags', 'versions', 'restore']);

/** `photos/2026/my cat.jpg` → `photos/2026/my%20cat.jpg`. */
export function encodeFilename(filename: string): string {
  const segments = checked(filename);
  if (segments.length > 1 && SUFFIX_WORDS.has(segments[segments.length - 1]!)) return encodeURIComponent(filename);
  return segments.map(encodeURIComponent).join('/');
}

/** The filename for a DELETE: as encodeFilename, which already keeps a name ending in `/delete` from being the delete alias. */
export const encodeFilenameForDelete = encodeFilename;

/** The filename before an operation's word (`…/files/<name>/tags`): one segment, its slashes as `%2F`, so no name is read as another. */
export function encodeFilenameBeforeWord(filename: string): string {
  checked(filename);
  return encodeURIComponent(filename);
}
