/**
 * The raw query string, decoded once. Kept as pairs in their order (not
 * URLSearchParams, which reads `+` as a space: SigV4 clients encode a space
 * as %20 and sign `+` as itself).
 */
export type QueryPairs = [name: string, value: string][];

function decode(text: string): string {
  // Most names and values hold no escape: nothing to decode.
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function splitUrl(rawUrl: string): { path: string; query: QueryPairs } {
  const mark = rawUrl.indexOf('?');
  const path = mark === -1 ? rawUrl : rawUrl.slice(0, mark);
  const search = mark === -1 ? '' : rawUrl.slice(mark + 1);
  const query: QueryPairs = [];
  for (const part of search.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    query.push(eq === -1 ? [decode(part), ''] : [decode(part.slice(0, eq)), decode(part.slice(eq + 1))]);
  }
  return { path, query };
}

/** The first value of a parameter, or undefined. */
export const queryValue = (query: QueryPairs, name: string): string | undefined => query.find(([n]) => n === name)?.[1];

const UNRESERVED = /^[A-Za-z0-9\-._~]*$/;

/** RFC 3986 percent-encoding as SigV4 wants it: everything but A-Z a-z 0-9 - . _ ~ is encoded. */
export const strictEncode = (text: string): string =>
  UNRESERVED.test(text) ? text : encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Each path segment decoded; a malformed escape is kept as it is. */
export const decodePath = (path: string): string[] => path.split('/').map(decode);
