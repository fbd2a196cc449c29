/** The OpenAPI document, generated from the routes' schemas, at /openapi.json and browsable at /docs. */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import type { Scope } from '../route.js';

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
    });
    await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'pail-openapi' },
);
