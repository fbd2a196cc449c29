/** Versioned buckets on the Pail API (decisions.md "Versions and the trash"): a file's versions, restore, the trash. */
import { Type, type Static } from '@sinclair/typebox';

export const FileVersionSchema = Type.Object(
  {
    version_id: Type.String({ description: 'The version id; `null` names the null version (written while versioning was off or suspended)' }),
    size: Type.Integer(),
    etag: Type.String(),
    created_at: Type.String({ format: 'date-time', description: 'When this version was written (or, for a delete marker, when the file was deleted)' }),
    is_latest: Type.Boolean(),
    is_delete_marker: Type.Boolean(),
    deleted_by: Type.Union([Type.String(), Type.Null()], {
      description: 'A delete marker: who deleted the file (key:<id>, session:<user id>, operator, …); null for versions',
    }),
    deleted_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'A delete marker: when; null for versions' }),
  },
  { title: 'FileVersion' },
);
export type FileVersion = Static<typeof FileVersionSchema>;

export const VersionQuery = Type.Object({
  version_id: Type.Optional(Type.String({ description: 'One version of the file (from …/versions); absent: the current one' })),
});

/** GET …/files/<name>: a version; for GET …/files/<name>/versions, which page of them. */
export const ReadFileQuery = Type.Object({
  ...VersionQuery.properties,
  after: Type.Optional(Type.String({ description: '…/versions only: versions older than this version id (the last of the previous page)' })),
  limit: Type.Optional(Type.String({ description: '…/versions only: 1 to 1000, default 1000' })),
});

/** DELETE …/files/<name>: a version, and (object lock) whether to bypass a GOVERNANCE retention, as S3's x-amz-bypass-governance-retention. */
export const DeleteFileQuery = Type.Object({
  ...VersionQuery.properties,
  bypass_governance: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'true: remove a version under GOVERNANCE retention (a key with the bypass-governance permission); COMPLIANCE and legal holds never yield',
    }),
  ),
});

export const RestoreBody = Type.Object(
  { version_id: Type.String({ description: 'The version to bring back: a copy of it becomes the current version (a new version)' }) },
  { additionalProperties: false, errorMessage: { type: 'The body must be a JSON object', required: { version_id: 'version_id is required' } } },
);

export const TrashEntrySchema = Type.Object(
  {
    filename: Type.String(),
    deleted_at: Type.String({ format: 'date-time' }),
    deleted_by: Type.Union([Type.String(), Type.Null()], { description: 'Who deleted it: key:<id>, session:<user id>, operator, …; null when unknown' }),
    size: Type.Integer({ description: 'The size of the version a restore brings back' }),
    restorable_version_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The newest version before the delete (POST …/files/<name>/restore with it); null: only delete markers are left',
    }),
    marker_version_id: Type.String({ description: "The delete marker's version id: deleting it for good (DELETE …?version_id=) also undeletes the file" }),
  },
  { title: 'TrashEntry' },
);
export type TrashEntry = Static<typeof TrashEntrySchema>;

export const TrashQuery = Type.Object({
  prefix: Type.Optional(Type.String()),
  after: Type.Optional(Type.String({ description: 'Names after this one (the last filename of the previous page)' })),
  limit: Type.Optional(Type.String({ description: '1 to 1000, default 1000' })),
});
