/**
 * Serves the built dashboard at `/`. Unknown GET paths outside the APIs get
 * index.html, so the app's own routes work on reload; everything else not
 * found gets the JSON 404.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The dashboard holds a session: no other site may frame it (clickjacking),
 * and it loads no plugins and no base URL from elsewhere. It frames and plays
 * only its own origin's files: the browser's PDF viewer in an <iframe>, and
 * <video>/<audio> against a file's URL (files are served with `sandbox`, so a
 * framed one runs no script as this origin).
 */
export const DASHBOARD_CSP = "frame-ancestors 'none'; object-src 'none'; frame-src 'self'; media-src 'self'; base-uri 'self'";

export function defaultDashboardDir(): string {
  // packages/server/dist/http -> packages/dashboard/dist
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dashboard/dist');
}

/** Registers static serving (when there is a build) and the not-found answer. */
export async function installDashboard(app: FastifyInstance, dir: string): Promise<void> {
  const spaFallback = await registerDashboard(app, dir);
  app.setNotFoundHandler((request, reply) => {
    if (spaFallback?.(request, reply)) return reply;
    void reply.header('x-request-id', request.id);
    return reply.code(404).send({ error: 'Not found', code: 'NotFound' });
  });
}

async function registerDashboard(app: FastifyInstance, dir: string): Promise<((request: FastifyRequest, reply: FastifyReply) => boolean) | null> {
  if (!existsSync(path.join(dir, 'index.html'))) {
    app.log.warn({ dir }, 'dashboard build not found; run `npm run build` to serve it');
    return null;
  }
  await app.register(fastifyStatic, {
    root: dir,
    wildcard: false,
    index: 'index.html',
    schemaHide: true,
    setHeaders: (response) => void response.header('content-security-policy', DASHBOARD_CSP),
  });
  return (request, reply) => {
    const url = request.url;
    if (request.method !== 'GET' || url.startsWith('/api/') || url.startsWith('/storage/')) return false;
    if (!(request.headers.accept ?? '').includes('text/html')) return false;
    void reply.header('cache-control', 'no-cache').header('content-security-policy', DASHBOARD_CSP).sendFile('index.html');
    return true;
  };
}
