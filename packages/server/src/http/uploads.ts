/**
 * Getting an upload's bytes and type out of a request, without buffering:
 * the multipart part named `file`, or a raw PUT body. Both hand a stream to
 * uploadObject(), which enforces the size cap and the plan's storage cap.
 */
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import mime from 'mime-types';
import type { Readable } from 'node:stream';
import { errors } from '../domain/errors.js';

const MIME_PATTERN = /^[A-Za-z0-9][\w.+-]*\/[\w.+-]+(\s*;\s*[\w.+-]+=("[^"]*"|[\w.+-]+))*$/;

const guessFrom = (filename: string): string | false => mime.lookup(filename);

/** A raw body's type: the declared one if there is one and it is well formed; else a guess from the name. */
export function contentTypeFor(filename: string, declared: string | undefined): string {
  const value = declared?.trim();
  if (value) {
    if (value.length > 255 || !MIME_PATTERN.test(value)) throw errors.validation('Content-Type is not a valid MIME type');
    return value;
  }
  return guessFrom(filename) || 'application/octet-stream';
}

/**
 * A multipart part's type. The multipart parser reports a part without its
 * own Content-Type as `text/plain` (RFC 7578's default), which is how
 * Python's requests and many other clients send files, so `text/plain`, like
 * a missing type or `application/octet-stream`, gives way to the filename's
 * extension when it names a type. An explicit `text/plain` on a name whose
 * extension says otherwise is taken for a missing one (documented in the README).
 */
export function partContentType(filename: string, declared: string | undefined): string {
  const value = declared?.trim().toLowerCase();
  if (!value || value === 'application/octet-stream' || value === 'text/plain') {
    return guessFrom(filename) || value || 'application/octet-stream';
  }
  return contentTypeFor(filename, declared);
}

export function declaredLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

export interface MultipartFile {
  filename: string | undefined;
  stream: Readable;
  mimetype: string | undefined;
  /**
   * Reads the rest of the form once the file's bytes are read, before the
   * file is committed: a form with a second file is refused (400) and stores
   * nothing, as the contract takes one file per request.
   */
  rest: () => Promise<void>;
}

/**
 * Runs `consume` on the part named `file`, letting go of the fields around it,
 * so the request never hangs. A form without such a part is a 400.
 */
export async function withMultipartFile<T>(request: FastifyRequest, consume: (file: MultipartFile) => Promise<T>): Promise<T> {
  if (!request.isMultipart()) throw errors.validation("Expected a multipart/form-data body with a file part named 'file'");
  const parts = request.parts()[Symbol.asyncIterator]();
  const rest = async (): Promise<void> => {
    for (let next = await parts.next(); !next.done; next = await parts.next()) {
      const part = next.value;
      if (part.type !== 'file') continue;
      part.file.resume();
      // Another file after the first (the parser's file limit refuses most of them first, with the same answer).
      throw errors.validation('Too many files in the multipart body; send one part named file');
    }
  };
  for (let next = await parts.next(); !next.done; next = await parts.next()) {
    const part = next.value;
    if (part.type !== 'file') continue;
    if (part.fieldname !== 'file') {
      part.file.resume();
      continue;
    }
    const result = await consume({ filename: part.filename, stream: part.file, mimetype: part.mimetype, rest });
    // Anything left (a consumer that did not ask for the rest) is read and let go.
    await rest();
    return result;
  }
  throw errors.validation("Multipart body has no file part named 'file'");
}
