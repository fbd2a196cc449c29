/**
 * Registering an operation: its name, every `METHOD /path` it answers
 * (written out, aliases beside the path they alias), its schemas and a
 * handler typed by those schemas.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type {
  FastifyBaseLogger,
  FastifyContextConfig,
  FastifyInstance,
  FastifySchema,
  HTTPMethods,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
} from 'fastify';
import { OPERATIONS, type OperationName } from './operations.js';

export type Scope = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

export type Handler<S extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  FastifyContextConfig,
  S,
  TypeBoxTypeProvider
>;

/** The two storage APIs: the Developer API (API keys) and the Client API (sessions). */
export type Api = 'developer' | 'client';
export const API_TAGS: Record<Api, string> = { developer: 'Developer API', client: 'Client API' };

/** `:id`: the bucket of a route under `…/buckets/:id`. */
export const BucketParams = Type.Object({ id: Type.String() });

/** The routes of one API, from a table that writes out both APIs' routes side by side. */
export const forApi = (api: Api, routes: Record<Api, readonly string[]>): readonly string[] => routes[api];

export interface OperationRoute<S extends FastifySchema> {
  operation: OperationName;
  /** `METHOD /path` for each way in. */
  routes: readonly string[];
  tag: string;
  schema: S;
  config?: Omit<FastifyContextConfig, 'operation'>;
  /** A body limit other than the server's (a long list of names). */
  bodyLimit?: number;
  handler: Handler<S>;
}

export function addRoute<S extends FastifySchema>(scope: Scope, route: OperationRoute<S>): void {
  for (const entry of route.routes) {
    const [method, url] = entry.split(' ') as [HTTPMethods, string];
    scope.route({
      method,
      url,
      schema: { tags: [route.tag], summary: OPERATIONS[route.operation], ...route.schema },
      config: { ...route.config, operation: route.operation },
      ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
      handler: route.handler,
    });
  }
}
