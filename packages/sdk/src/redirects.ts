/**
 * fetch, following redirects itself: fetch would carry `x-api-key` along to
 * wherever a redirect points, so the key (and the session) is dropped whenever
 * the next hop is another origin. In a browser a redirect cannot be read (it
 * is opaque), so it is refused rather than followed with the key.
 */
import { PailError } from './errors.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/** `baseUrl` is the server's: the origin the credentials belong to. */
export async function fetchFollowingRedirects(fetchImpl: typeof fetch, baseUrl: string, url: URL, init: RequestInit): Promise<Response> {
  const origin = new URL(baseUrl).origin;
  // (A signed url may point elsewhere; its requests carry no credential to drop.)
  let target = url;
  let request = init;
  for (let hops = 0; ; hops++) {
    const response = await fetchImpl(target, { ...request, redirect: request.redirect === 'error' ? 'error' : 'manual' });
    if (response.type === 'opaqueredirect') {
      throw new PailError('The server answered with a redirect; the SDK does not follow redirects in a browser, where it cannot see where they lead', {
        status: response.status,
      });
    }
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null || hops >= MAX_REDIRECTS) return response;
    await response.body?.cancel();
    const next = new URL(location, target);
    const headers: Record<string, string> = { ...(request.headers as Record<string, string>) };
    if (next.origin !== origin) {
      delete headers['x-api-key'];
      delete headers.authorization;
    }
    // As fetch does: 303, and 301/302 after a POST, become a GET without a body.
    const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === 'POST');
    if (asGet) {
      delete headers['content-type'];
      delete headers['content-length'];
      request = { method: 'GET', headers, signal: request.signal ?? null };
    } else {
      request = { ...request, headers };
    }
    target = next;
  }
}
