/** The OpenAPI document, generated from the routes' schemas, at /openapi.json and browsable at /docs. */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import type { Scope } from '../route.js';

/**
 * A filename is the rest of a file route's path (`…/files/*`); the document
 * names that part `{filename}`, as a reader expects, instead of `{*}`.
 */
function namedWildcard({ schema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  if (!url.endsWith('/*')) return { schema, url };
  const params = schema.params as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  const renamed = params?.properties && {
    ...params,
    properties: Object.fromEntries(Object.entries(params.properties).map(([key, value]) => [key === '*' ? 'filename' : key, value])),
    required: params.required?.map((key) => (key === '*' ? 'filename' : key)),
  };
  return { schema: renamed ? { ...schema, params: renamed } : schema, url: `${url.slice(0, -1)}:filename` };
}

export const openApi = fp(
  async (app: Scope, options: { publicUrl: string }) => {
    await app.register(fastifySwagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Pail', version: '1.0.0', description: 'Self-hostable bucket storage: Developer API (API keys) and Client API (sessions).' },
        servers: [{ url: options.publicUrl }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
            bearer: { type: 'http', scheme: 'bearer' },
            session: { type: 'apiKey', in: 'cookie', name: 'pail_session' },
          },
        },
      },
      transform: namedWildcard,
    });
    await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'pail-openapi' },
);
