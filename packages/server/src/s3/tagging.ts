/**
 * S3's shapes of tags: the Tagging XML document (Put/GetObjectTagging,
 * bucket tagging, POST Object's tagging field) and the x-amz-tagging header
 * (URL-encoded k=v&k2=v2). The limits are the domain's (object-tags.ts);
 * here they get S3's InvalidTag.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { encodeTags, tagRefusal, type Tag } from '../domain/object-tags.js';
import { S3Error, s3Errors } from './errors.js';
import { asList, field, parseXml, type XmlElement } from './xml.js';

const invalidTag = (message: string) => new S3Error('InvalidTag', 400, message);

/** The tags of a Tagging document; MalformedXML when it is not one. */
export function tagsFromXml(body: string): Tag[] {
  const tagSet = field(field(parseXml(body), 'Tagging'), 'TagSet');
  if (tagSet === undefined) throw s3Errors.malformedXml();
  // <TagSet/> parses as '': no tags.
  return asList(field(tagSet, 'Tag')).map((tag) => {
    const key = field(tag, 'Key');
    const value = field(tag, 'Value') ?? '';
    if (typeof key !== 'string' || typeof value !== 'string') throw s3Errors.malformedXml();
    return { key, value };
  });
}

/** The tags of an x-amz-tagging header (a key without `=` has an empty value, as S3 reads it). */
export function tagsFromHeader(value: string): Tag[] {
  return [...new URLSearchParams(value)].map(([key, tagValue]) => ({ key, value: tagValue }));
}

/** Tags as kept (canonical JSON), undefined for none; S3's InvalidTag past its limits. */
export function checkedTags(tags: readonly Tag[], on: 'object' | 'bucket' = 'object'): string | undefined {
  const refusal = tagRefusal(tags, on);
  if (refusal !== null) throw invalidTag(refusal);
  return encodeTags(tags, on) ?? undefined;
}

/** A new object's tags from its x-amz-tagging header (PutObject, CreateMultipartUpload, CopyObject's REPLACE); undefined for none. */
export function taggingOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-amz-tagging'];
  return header === undefined ? undefined : checkedTags(tagsFromHeader(String(header)));
}

/** A Tagging document's content: the set, <TagSet/> when empty. */
export const tagSetXml = (tags: readonly Tag[]): XmlElement => ({
  TagSet: tags.length === 0 ? {} : { Tag: tags.map(({ key, value }) => ({ Key: key, Value: value })) },
});
