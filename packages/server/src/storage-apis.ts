/**
 * The two storage APIs: the same bucket and file routes, mounted once in a
 * scope that authenticates API keys (Developer API) and once in a scope that
 * authenticates sessions (Client API).
 */
import { apiKeyAuth, sessionAuth } from './http/auth.js';
import type { AppContext } from './http/context.js';
import type { Api, Scope } from './http/route.js';
import { registerBucketRoutes } from './api/buckets.js';
import { registerFileDetailRoutes } from './api/file-details.js';
import { registerFileRoutes } from './api/files.js';
import { registerFileTagRoutes } from './api/file-tags.js';
import { registerLifecycleRoutes } from './api/lifecycle.js';
import { registerVersionRoutes } from './api/versions.js';
import { registerZipRoutes } from './api/zip.js';
import { registerResumableUploadRoutes } from './tus/routes.js';
import { registerUnfinishedUploadRoutes } from './api/unfinished-uploads.js';
import { registerWebhookRoutes } from './api/webhooks.js';
import { registerAuditRoutes } from './api/audit.js';

export async function registerStorageApis(app: Scope, ctx: AppContext): Promise<void> {
  const auth: Record<Api, ReturnType<typeof apiKeyAuth>> = { developer: apiKeyAuth(ctx), client: sessionAuth(ctx) };
  for (const api of ['developer', 'client'] as const) {
    await app.register(async (scope: Scope) => {
      scope.addHook('onRequest', auth[api]);
      registerBucketRoutes(scope, ctx, api);
      registerFileRoutes(scope, ctx, api);
      registerVersionRoutes(scope, ctx, api);
      registerFileDetailRoutes(scope, ctx, api);
      registerFileTagRoutes(scope, ctx, api);
      registerZipRoutes(scope, ctx, api);
      registerResumableUploadRoutes(scope, ctx, api);
      registerUnfinishedUploadRoutes(scope, ctx, api);
      registerWebhookRoutes(scope, ctx, api);
      registerAuditRoutes(scope, ctx, api);
      registerLifecycleRoutes(scope, ctx, api);
    });
  }
}
