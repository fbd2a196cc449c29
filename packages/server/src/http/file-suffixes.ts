/**
 * The contract names some operations on a file as a word after its path
 * (`…/files/<filename>/tags`), while a filename is the whole rest of the path
 * after `/files/`. Before routing, a path ending in such a literal word, with
 * a method it has, is rewritten to the operation's own path
 * (`…/<word>/<filename>`, as a file's details live at `…/details/<filename>`),
 * where its route is. A file whose last segment is that word is named with the
 * slash before it as `%2F`, as service.md's `…/delete` alias asks.
 */
import type { IncomingMessage } from 'node:http';

/** Each word, and the methods that mean the operation rather than the file. */
const FILE_SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  tags: ['GET', 'PUT', 'DELETE'],
};

/** `<api root>/<bucket>/files/<filename>/<word>`, on both storage APIs (the filename is at least one character). */
const SUFFIXED_FILE_PATH = /^(\/api\/v1\/buckets?|\/api\/buckets)\/([^/]+)\/files\/(.+)\/([a-z-]+)$/;

/** Fastify's rewriteUrl: the url to route, unchanged unless it is a suffixed file operation. */
export function routeFileSuffixes(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const match = SUFFIXED_FILE_PATH.exec(path);
  if (!match) return url;
  const [, root, bucket, filename, word] = match as unknown as [string, string, string, string, string];
  if (!FILE_SUFFIXES[word]?.includes(request.method ?? '')) return url;
  return `${root}/${bucket}/${word}/${filename}${queryAt === -1 ? '' : url.slice(queryAt)}`;
}
