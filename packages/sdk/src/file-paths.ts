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

/** `photos/2026/my cat.jpg` → `photos/2026/my%20cat.jpg`. */
export function encodeFilename(filename: string): string {
  return checked(filename).map(encodeURIComponent).join('/');
}

/**
 * The filename for a DELETE. On the Developer API a DELETE path whose last
 * literal segment is `delete` is the delete alias (`…/files/a/b/delete`
 * deletes `a/b`), so a file whose last segment is `delete` is sent with its
 * slashes as `%2F` (`a%2Fdelete`), which the server reads as one name.
 */
export function encodeFilenameForDelete(filename: string): string {
  const segments = checked(filename);
  if (segments.length > 1 && segments[segments.length - 1] === 'delete') return encodeURIComponent(filename);
  return segments.map(encodeURIComponent).join('/');
}
