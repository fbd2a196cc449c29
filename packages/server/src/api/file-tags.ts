/**
 * A file's tags on both storage APIs: `GET/PUT/DELETE …/files/<filename>/tags`
 * (routed to `…/tags/<filename>` by http/file-suffixes.ts), `{tags: {key: value}}`.
 * The same tags and limits as S3's object tagging (domain/object-tags.ts).
 */
import { Data, FileTagsSchema } from '@pail/shared';
import { Type } from '@sinclair/typebox';
import { getOwnBucket } from '../domain/buckets.js';
import { decodeTags, setObjectTags, tagMap, tagsOfMap } from '../domain/object-tags.js';
import { parseFilename, requireObject } from '../domain/objects.js';
import { signedIn } from '../http/auth.js';
import type { AppContext } from '../http/context.js';
import { addRoute, API_TAGS, forApi, type Api, type Scope } from '../http/route.js';

const FileParams = Type.Object({ id: Type.String(), '*': Type.String({ description: 'The filename; a / in it as / or %2F' }) });
const response = { 200: Data(FileTagsSchema) };

export function registerFileTagRoutes(scope: Scope, ctx: AppContext, api: Api): void {
  const { db, storage } = ctx;
  const tag = API_TAGS[api];
  const paths = (method: string) =>
    forApi(api, {
      developer: [`${method} /api/v1/buckets/:id/tags/*`, `${method} /api/v1/bucket/:id/tags/*`],
      client: [`${method} /api/buckets/:id/tags/*`],
    });
  const description = '…/files/<filename>/tags, or …/tags/<filename>';

  addRoute(scope, {
    operation: 'fileTags',
    routes: paths('GET'),
    tag,
    schema: { description, params: FileParams, response },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const object = await requireObject(storage, bucket, parseFilename(request.params['*']));
      return { data: { tags: tagMap(decodeTags(object.tags)) } };
    },
  });

  addRoute(scope, {
    operation: 'setFileTags',
    routes: paths('PUT'),
    tag,
    schema: { description, params: FileParams, body: FileTagsSchema, response },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      const kept = await setObjectTags(storage, bucket, parseFilename(request.params['*']), tagsOfMap(request.body.tags), 'setFileTags');
      return { data: { tags: tagMap(kept.tags) } };
    },
  });

  addRoute(scope, {
    operation: 'deleteFileTags',
    routes: paths('DELETE'),
    tag,
    schema: { description, params: FileParams, response },
    handler: async (request) => {
      const bucket = await getOwnBucket(db, signedIn(request).id, request.params.id);
      await setObjectTags(storage, bucket, parseFilename(request.params['*']), [], 'deleteFileTags');
      return { data: { tags: {} } };
    },
  });
}
