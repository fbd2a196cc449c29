/**
 * Serves the built dashboard at `/`. Unknown GET paths outside the APIs get
 * index.html, so the app's own routes work on reload; API paths keep their
 * JSON 404.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function defaultDashboardDir(): string {
  // packages/server/dist/http -> packages/dashboard/dist
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dashboard/dist');
}

/** Registers static serving; returns the fallback for the not-found handler, or null when there is no build. */
export async function registerDashboard(app: FastifyInstance, dir: string): Promise<((request: FastifyRequest, reply: FastifyReply) => boolean) | null> {
  if (!existsSync(path.join(dir, 'index.html'))) {
    app.log.warn({ dir }, 'dashboard build not found; run `npm run build` to serve it');
    return null;
  }
  await app.register(fastifyStatic, { root: dir, wildcard: false, index: 'index.html', schemaHide: true });
  return (request, reply) => {
    const url = request.url;
    if (request.method !== 'GET' || url.startsWith('/api/') || url.startsWith('/storage/')) return false;
    if (!(request.headers.accept ?? '').includes('text/html')) return false;
    void reply.header('cache-control', 'no-cache').sendFile('index.html');
    return true;
  };
}
