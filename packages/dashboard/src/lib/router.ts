/**
 * A very small history router. The server answers unknown non-API GET paths
 * with index.html, so deep links like /buckets/3 survive a reload.
 */
const NAVIGATE_EVENT = 'pail:navigate';

export function currentLocation(): string {
  return window.location.pathname + window.location.search;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === currentLocation()) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAVIGATE_EVENT));
}

export function subscribe(callback: () => void): () => void {
  window.addEventListener('popstate', callback);
  window.addEventListener(NAVIGATE_EVENT, callback);
  return () => {
    window.removeEventListener('popstate', callback);
    window.removeEventListener(NAVIGATE_EVENT, callback);
  };
}

export type Route =
  | { name: 'login' }
  | { name: 'signup' }
  | { name: 'buckets' }
  | { name: 'bucket'; bucketId: number }
  | { name: 'trash'; bucketId: number }
  | { name: 'webhooks'; bucketId: number }
  | { name: 'audit' }
  | { name: 'usage' }
  | { name: 'sdk' }
  | { name: 'home' }
  | { name: 'not-found' };

export function matchRoute(pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/') return { name: 'home' };
  if (path === '/login') return { name: 'login' };
  if (path === '/signup') return { name: 'signup' };
  if (path === '/buckets') return { name: 'buckets' };
  if (path === '/usage') return { name: 'usage' };
  if (path === '/sdk') return { name: 'sdk' };
  if (path === '/audit') return { name: 'audit' };
  const webhooks = /^\/buckets\/(\d+)\/webhooks$/.exec(path);
  if (webhooks?.[1]) return { name: 'webhooks', bucketId: Number(webhooks[1]) };
  const bucket = /^\/buckets\/(\d+)$/.exec(path);
  if (bucket?.[1]) return { name: 'bucket', bucketId: Number(bucket[1]) };
  const trash = /^\/buckets\/(\d+)\/trash$/.exec(path);
  if (trash?.[1]) return { name: 'trash', bucketId: Number(trash[1]) };
  return { name: 'not-found' };
}
