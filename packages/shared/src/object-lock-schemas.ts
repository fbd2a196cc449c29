/**
 * The contract of object lock on the Pail API (decisions.md, "Object lock"):
 * a bucket's lock and default retention, a file's retention and legal hold,
 * and the bodies that set them, beside schemas.ts, whose conventions they follow.
 */
import { Type, type Static } from '@sinclair/typebox';
import { NOT_AN_OBJECT } from './messages.js';

export const RETENTION_MODES = ['GOVERNANCE', 'COMPLIANCE'] as const;
export type RetentionMode = (typeof RETENTION_MODES)[number];
const RetentionModeSchema = Type.Union(RETENTION_MODES.map((mode) => Type.Literal(mode)));

/** A bucket's default retention: what every new version gets unless its upload names its own; days or years, not both. */
export const DefaultRetentionSchema = Type.Object(
  {
    mode: RetentionModeSchema,
    days: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    years: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
  },
  { title: 'DefaultRetention' },
);
export type DefaultRetention = Static<typeof DefaultRetentionSchema>;

/** The fields a bucket shows about its lock (StorageBucket). */
export const BucketLockFields = {
  object_lock: Type.Boolean({ description: 'Made with object lock: versioned for good, its versions may carry a retention and a legal hold' }),
  default_retention: Type.Union([DefaultRetentionSchema, Type.Null()], { description: 'null: new versions get no retention of their own' }),
};

/** A version's retention: not to be removed until `retain_until`. */
export const RetentionSchema = Type.Object({ mode: RetentionModeSchema, retain_until: Type.String({ format: 'date-time' }) }, { title: 'Retention' });
export type Retention = Static<typeof RetentionSchema>;

/** The fields a file's details show about its lock (FileDetails). */
export const FileLockFields = {
  retention: Type.Union([RetentionSchema, Type.Null()], { description: 'null: none; a date in the past holds nothing any more' }),
  legal_hold: Type.Boolean(),
};

/** What a new bucket may ask for (CreateBucketBody). */
export const CreateBucketLockFields = {
  object_lock: Type.Optional(Type.Boolean({ description: 'Make the bucket with object lock (versioned for good); cannot be undone' })),
  default_retention: Type.Optional(
    Type.Union(
      [
        Type.Object({
          mode: RetentionModeSchema,
          days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 36500 }), Type.Null()])),
          years: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 100 }), Type.Null()])),
        }),
        Type.Null(),
      ],
      { description: 'With object_lock: the retention new versions get, in days or years', examples: [{ mode: 'COMPLIANCE', days: 30 }] },
    ),
  ),
};
export const CREATE_BUCKET_LOCK_MESSAGES = {
  object_lock: 'object_lock must be true or false',
  default_retention: 'default_retention must be {mode: "GOVERNANCE" or "COMPLIANCE", days or years: a whole number of at least 1} or null',
};

/** PUT …/files/:filename/retention: set, extend, or (GOVERNANCE, with bypass) shorten or remove a version's retention. */
export const SetRetentionBody = Type.Object(
  {
    mode: Type.Union([RetentionModeSchema, Type.Null()], { description: 'null with retain_until null: remove it (GOVERNANCE only, with bypass_governance)' }),
    retain_until: Type.Union([Type.String(), Type.Null()], { examples: ['2030-01-01T00:00:00Z'] }),
    bypass_governance: Type.Optional(Type.Boolean({ description: 'Shorten or remove a GOVERNANCE retention (a key with the bypass-governance permission)' })),
  },
  {
    errorMessage: {
      type: NOT_AN_OBJECT,
      required: { mode: 'mode is required', retain_until: 'retain_until is required' },
      properties: {
        mode: 'mode must be "GOVERNANCE", "COMPLIANCE" or null',
        retain_until: 'retain_until must be an ISO 8601 date and time, or null',
        bypass_governance: 'bypass_governance must be true or false',
      },
    },
  },
);
export type SetRetention = Static<typeof SetRetentionBody>;

/** PUT …/files/:filename/legal-hold. */
export const SetLegalHoldBody = Type.Object(
  { legal_hold: Type.Boolean() },
  { errorMessage: { type: NOT_AN_OBJECT, required: { legal_hold: 'legal_hold is required' }, properties: { legal_hold: 'legal_hold must be true or false' } } },
);
export type SetLegalHold = Static<typeof SetLegalHoldBody>;

/** What a file's retention and legal hold are after a change. */
export const FileLockSchema = Type.Object({ ...FileLockFields }, { title: 'FileLock' });
export type FileLock = Static<typeof FileLockSchema>;
