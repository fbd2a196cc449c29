/**
 * A file's tags on the Pail API (S3's object tagging as JSON):
 * `GET/PUT/DELETE …/files/<filename>/tags`, `{tags: {key: value}}`. S3's
 * limits (10 tags, keys up to 128 characters, values up to 256) are the
 * server's one rule (domain/object-tags.ts), shared with the S3 door.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_FILE_TAGS, MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_LENGTH } from './names.js';
import { NOT_AN_OBJECT } from './schemas.js';

export const TagMapSchema = Type.Record(Type.String(), Type.String(), {
  description: `Tag values by key: at most ${MAX_FILE_TAGS}, keys 1–${MAX_TAG_KEY_LENGTH} characters, values up to ${MAX_TAG_VALUE_LENGTH}, no key starting aws:`,
  examples: [{ project: 'pail', stage: 'final' }],
});
export type TagMap = Static<typeof TagMapSchema>;

/** The tags of a file, as answered and as a PUT replaces them whole (`{}` removes them). */
export const FileTagsSchema = Type.Object(
  { tags: TagMapSchema },
  {
    title: 'FileTags',
    errorMessage: { type: NOT_AN_OBJECT, required: { tags: 'tags is required' }, properties: { tags: 'tags must be an object of text values' } },
  },
);
export type FileTags = Static<typeof FileTagsSchema>;
