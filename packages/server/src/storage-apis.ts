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
import { registerZipRoutes } from './api/zip.js';
import { registerResumableUploadRoutes } from './tus/routes.js';
import { registerUnfinishedUploadRoutes } from './api/unfinished-uploads.js';

export async function registerStorageApis(app: Scope, ctx: AppContext): Promise<void> {
  const auth: Record<Api, ReturnType<typeof apiKeyAuth>> = { developer: apiKeyAuth(ctx), client: sessionAuth(ctx) };
  for (const api of ['developer', 'client'] as const) {
    await app.register(async (scope: Scope) => {
      scope.addHook('onRequest', auth[api]);
      registerBucketRoutes(scope, ctx, api);
      registerFileRoutes(scope, ctx, api);
      registerFileDetailRoutes(scope, ctx, api);
      registerZipRoutes(scope, ctx, api);
      registerResumableUploadRoutes(scope, ctx, api);
      registerUnfinishedUploadRoutes(scope, ctx, api);
    });
  }
}
