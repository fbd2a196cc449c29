/**
 * GetObjectAttributes: what Pail stores of an object, for the attributes
 * `x-amz-object-attributes` names: its ETag (without quotes, as S3 gives it
 * here), its checksum, its parts (domain/object-parts.ts, paged by
 * `x-amz-max-parts` and `x-amz-part-number-marker`), its storage class
 * (always STANDARD) and size, with Last-Modified and, in a versioned bucket,
 * x-amz-version-id. Read as HeadObject reads, by versionId too.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ObjectRow } from '../../db/schema.js';
import { CHECKSUM_ALGORITHMS, isComposite } from '../../domain/checksum-algorithms.js';
import { partsOf, type ObjectParts } from '../../domain/object-parts.js';
import { shownVersionId } from '../../domain/versions.js';
import { s3Errors } from '../errors.js';
import { sendXml, type Handler } from '../handler-support.js';
import { objectAsked } from '../object-reads.js';
import { queryValue } from '../query.js';
import type { XmlElement } from '../xml.js';

const ATTRIBUTES = ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'] as const;
type Attribute = (typeof ATTRIBUTES)[number];
/** S3's page of parts when the request sets none. */
const DEFAULT_MAX_PARTS = 1000;

export const GetObjectAttributes: Handler = async (ctx, request, reply, target) => {
  const asked = attributesAsked(request.headers);
  const page = pageAsked(request.headers);
  const { principal } = target.caller;
  const bucketRef = { ownerName: { ownerId: principal.user.id, name: target.bucket } };
  const { bucket, object } = await objectAsked(ctx, bucketRef, target.key, principal, queryValue(target.query, 'versionId'));
  const checksum = storedChecksum(object);
  const parts = asked.has('ObjectParts') ? await partsOf(ctx.storage, object) : undefined;
  // In S3's order, each only when asked for (and, for a checksum and parts, when there is one).
  const answer: XmlElement = {
    ETag: asked.has('ETag') ? object.etag : undefined,
    Checksum: asked.has('Checksum') && checksum ? { [`Checksum${checksum.label}`]: checksum.value, ChecksumType: checksum.type } : undefined,
    ObjectParts: parts ? partsXml(parts, page, checksum?.label) : undefined,
    StorageClass: asked.has('StorageClass') ? 'STANDARD' : undefined,
    ObjectSize: asked.has('ObjectSize') ? object.size : undefined,
  };
  reply.header('last-modified', new Date(object.updated_at).toUTCString());
  if (bucket.versioning !== 'unversioned') reply.header('x-amz-version-id', shownVersionId(object.version_id));
  return sendXml(reply, 'GetObjectAttributesResponse', present(answer));
};

/** The element without its absent children (the builder would write them empty). */
const present = (element: XmlElement): XmlElement => Object.fromEntries(Object.entries(element).filter(([, value]) => value !== undefined));

/** The attributes named, comma-separated in one header or several; none, or one S3 does not have, is InvalidArgument as S3 answers. */
function attributesAsked(headers: IncomingHttpHeaders): Set<Attribute> {
  const raw = headers['x-amz-object-attributes'];
  const names = (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',').map((name) => name.trim());
  if (names.every((name) => name === ''))
    throw s3Errors.invalidArgument('The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty');
  const asked = new Set<Attribute>();
  for (const name of names) {
    if (!(ATTRIBUTES as readonly string[]).includes(name)) throw s3Errors.invalidArgument('Invalid attribute name specified.');
    asked.add(name as Attribute);
  }
  return asked;
}

interface PartsPage {
  max: number;
  marker: number;
}

function pageAsked(headers: IncomingHttpHeaders): PartsPage {
  const number = (name: string, fallback: number): number => {
    const raw = headers[name];
    if (raw === undefined) return fallback;
    if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw)) throw s3Errors.invalidArgument(`${name} must be a whole number`);
    return Number(raw);
  };
  return {
    max: Math.min(number('x-amz-max-parts', DEFAULT_MAX_PARTS), DEFAULT_MAX_PARTS),
    marker: number('x-amz-part-number-marker', 0),
  };
}

/** The object's stored checksum (one algorithm: the one its upload used), as S3 names it. */
function storedChecksum(object: ObjectRow): { label: string; value: string; type: string } | undefined {
  if (object.checksums === null) return undefined;
  const [stored] = Object.entries(JSON.parse(object.checksums) as Record<string, string>);
  const known = stored && CHECKSUM_ALGORITHMS[stored[0]];
  if (!stored || !known) return undefined;
  return { label: known.label, value: stored[1], type: isComposite(stored[1]) ? 'COMPOSITE' : 'FULL_OBJECT' };
}

/**
 * ObjectParts: the count, and a page of the parts after the marker when Pail
 * knows them; each part's checksum is in its upload's algorithm, the
 * object's (`label`).
 */
function partsXml(parts: ObjectParts, page: PartsPage, label: string | undefined): XmlElement {
  if (parts.parts === null) return { PartsCount: parts.count };
  const after = parts.parts.filter((part) => part.number > page.marker);
  const shown = after.slice(0, page.max);
  const truncated = after.length > shown.length;
  return present({
    PartsCount: parts.count,
    PartNumberMarker: page.marker,
    NextPartNumberMarker: truncated ? shown[shown.length - 1]!.number : undefined,
    MaxParts: page.max,
    IsTruncated: truncated,
    Part: shown.map((part) => ({
      PartNumber: part.number,
      Size: part.size,
      ...(part.checksum !== undefined && label !== undefined ? { [`Checksum${label}`]: part.checksum } : {}),
    })),
  });
}
