/**
 * The contract of a file's details, its metadata edit and zip downloads
 * (GET …/details/<file>, PATCH …/files/<file>, GET/POST …/zip), beside
 * schemas.ts, whose conventions they follow.
 */
import { Type, type Static } from '@sinclair/typebox';
import { BucketObjectSchema, NOT_AN_OBJECT } from './schemas.js';
import { TagMapSchema } from './tag-schemas.js';
import { FileLockFields } from './object-lock-schemas.js';

/** A file's details: what the listing shows, its ETag, the headers and user metadata stored with it, and its tags. */
export const FileDetailsSchema = Type.Object(
  {
    ...BucketObjectSchema.properties,
    etag: Type.String({ description: 'The ETag, without quotes' }),
    metadata: Type.Record(Type.String(), Type.String(), {
      description: 'User metadata: S3 x-amz-meta-<name> headers, by <name> in lower case',
      examples: [{ author: 'ada' }],
    }),
    cache_control: Type.Union([Type.String(), Type.Null()]),
    content_disposition: Type.Union([Type.String(), Type.Null()]),
    content_encoding: Type.Union([Type.String(), Type.Null()]),
    content_language: Type.Union([Type.String(), Type.Null()]),
    expires: Type.Union([Type.String(), Type.Null()]),
    tags: TagMapSchema,
    ...FileLockFields,
  },
  { title: 'FileDetails' },
);
export type FileDetails = Static<typeof FileDetailsSchema>;

/** The headers stored with a file, as fields of FileDetails and EditFileBody. */
export const STORED_HEADER_FIELDS = ['cache_control', 'content_disposition', 'content_encoding', 'content_language', 'expires'] as const;
export type StoredHeaderField = (typeof STORED_HEADER_FIELDS)[number];

const storedHeader = (example: string) =>
  Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], { description: 'null clears it', examples: [example] }));

/** PATCH of a file: its user metadata (replaced whole when given), type and stored headers (absent: unchanged; null: cleared). */
export const EditFileBody = Type.Object(
  {
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'Replaces the user metadata whole ({} clears it)', examples: [{ author: 'ada' }] }),
    ),
    content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    cache_control: storedHeader('max-age=3600'),
    content_disposition: storedHeader('attachment; filename="report.pdf"'),
    content_encoding: storedHeader('gzip'),
    content_language: storedHeader('en'),
    expires: storedHeader('Thu, 01 Jan 2030 00:00:00 GMT'),
  },
  {
    errorMessage: {
      type: NOT_AN_OBJECT,
      properties: {
        metadata: 'metadata must be an object of text values',
        content_type: 'content_type must be a MIME type',
        cache_control: 'cache_control must be text (at most 2048 characters) or null',
        content_disposition: 'content_disposition must be text (at most 2048 characters) or null',
        content_encoding: 'content_encoding must be text (at most 2048 characters) or null',
        content_language: 'content_language must be text (at most 2048 characters) or null',
        expires: 'expires must be text (at most 2048 characters) or null',
      },
    },
  },
);
export type EditFile = Static<typeof EditFileBody>;

/** The most names a selection zip may list (a folder in `folders` holds any number). */
export const MAX_ZIP_FILENAMES = 10_000;
export const MAX_ZIP_FOLDERS = 1_000;

/** POST …/zip: a selection of files and folders, named in the zip relative to `prefix`. */
export const ZipBody = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({ description: 'The folder the selection is in (ending in /): entries are named relative to it', examples: ['photos/'] }),
    ),
    filenames: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_ZIP_FILENAMES, examples: [['photos/a.jpg']] })),
    folders: Type.Optional(
      Type.Array(Type.String(), { maxItems: MAX_ZIP_FOLDERS, description: 'Folders (ending in /): everything under each', examples: [['photos/2024/']] }),
    ),
  },
  {
    errorMessage: {
      type: NOT_AN_OBJECT,
      properties: {
        prefix: 'prefix must be a folder name',
        filenames: `filenames must be a list of at most ${MAX_ZIP_FILENAMES} filenames`,
        folders: `folders must be a list of at most ${MAX_ZIP_FOLDERS} folder names`,
      },
    },
  },
);
export type ZipSelection = Static<typeof ZipBody>;

export const ZipQuery = Type.Object({
  prefix: Type.Optional(Type.String({ description: 'The folder to zip (ending in /); absent or empty: the whole bucket', examples: ['photos/'] })),
});
