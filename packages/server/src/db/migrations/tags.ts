/** Migration 0019: object and bucket tags (S3's tagging, issue 37). */
import { type Kysely, type Migration } from 'kysely';

/**
 * Tags as canonical JSON (domain/object-tags.ts: [[key, value], …] sorted by
 * key), null for none: on an object's row, so a version and its tags are
 * written in one commit; on a multipart upload, for the object it completes;
 * and on a bucket.
 */
export function tags(): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const table of ['objects', 'buckets', 'multipart_uploads']) {
        await db.schema.alterTable(table).addColumn('tags', 'text').execute();
      }
    },
  };
}
