/**
 * A bucket's lifecycle rules through the Pail API (PUT/GET/DELETE
 * …/buckets/:id/lifecycle): S3's LifecycleConfiguration as JSON, field for
 * field in snake_case, so a rule reads the same on both doors. The server's
 * domain/lifecycle-rules.ts checks what a schema cannot (unique ids, one of
 * Days/Date, sizes in order).
 */
import { Type, type Static } from '@sinclair/typebox';
import { NOT_AN_OBJECT } from './schemas.js';

const Days = (description: string) => Type.Integer({ minimum: 1, description });

export const LifecycleFilterSchema = Type.Object(
  {
    prefix: Type.Optional(Type.String({ maxLength: 1024, description: 'Names starting with this' })),
    tags: Type.Optional(
      Type.Array(Type.Object({ key: Type.String({ minLength: 1, maxLength: 128 }), value: Type.String({ maxLength: 256 }) }), {
        maxItems: 10,
        description: 'Files carrying every one of these tags',
      }),
    ),
    object_size_greater_than: Type.Optional(Type.Integer({ minimum: 0, description: 'Files larger than this many bytes' })),
    object_size_less_than: Type.Optional(Type.Integer({ minimum: 1, description: 'Files smaller than this many bytes' })),
  },
  { additionalProperties: false, description: 'Which files a rule applies to: all of the given conditions (S3: Filter, And)' },
);
export type LifecycleFilter = Static<typeof LifecycleFilterSchema>;

export const LifecycleRuleSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 255, description: 'Unique within the bucket; made up when absent' })),
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
    prefix: Type.Optional(Type.String({ maxLength: 1024, description: "S3's older top-level Prefix; use filter.prefix instead (never both)" })),
    filter: Type.Optional(LifecycleFilterSchema),
    expiration: Type.Optional(
      Type.Object(
        {
          days: Type.Optional(Days('Delete the current version this many days after it was written')),
          date: Type.Optional(Type.String({ description: 'Delete current versions from this day on (midnight UTC, e.g. 2030-01-01)' })),
          expired_object_delete_marker: Type.Optional(Type.Boolean({ description: 'Remove a delete marker no other version is left under' })),
        },
        { additionalProperties: false, description: 'Exactly one of days, date and expired_object_delete_marker' },
      ),
    ),
    noncurrent_version_expiration: Type.Optional(
      Type.Object(
        {
          noncurrent_days: Days('Delete an old version this many days after it stopped being current'),
          newer_noncurrent_versions: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 100, description: 'Keep this many newer old versions whatever their age' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    abort_incomplete_multipart_upload: Type.Optional(
      Type.Object({ days_after_initiation: Days('Cancel an unfinished S3 multipart upload this many days after it began') }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, title: 'LifecycleRule' },
);
export type LifecycleRule = Static<typeof LifecycleRuleSchema>;

export const LifecycleConfigurationSchema = Type.Object(
  { rules: Type.Array(LifecycleRuleSchema, { minItems: 1, maxItems: 1000 }) },
  { title: 'LifecycleConfiguration', errorMessage: { type: NOT_AN_OBJECT } },
);
export type LifecycleConfiguration = Static<typeof LifecycleConfigurationSchema>;
