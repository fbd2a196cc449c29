/** The caller's audit log (issue 39): GET /api/audit (Client API) and GET /api/v1/audit (Developer API). */
import { AuditPageSchema, AuditQuery } from '@pail/shared';
import { readAudit } from '../domain/audit.js';
import { bucketScope } from '../domain/authorize.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, forApi, type Api, type Scope } from '../http/route.js';

export function registerAuditRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  addRoute(scope, {
    operation: 'readAudit',
    routes: forApi(api, { developer: ['GET /api/v1/audit'], client: ['GET /api/audit'] }),
    tag: API_TAGS[api],
    schema: { querystring: AuditQuery, response: { 200: AuditPageSchema } },
    handler: async (request) => {
      const page = await readAudit(ctx.db, signedIn(request).id, request.query, bucketScope(request.principal));
      return { data: page.entries, next_cursor: page.next_cursor };
    },
  });
}
