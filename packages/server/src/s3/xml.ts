/**
 * S3's XML, built and parsed with fast-xml-parser (never by concatenation,
 * so keys and messages are always escaped).
 */
import { XMLBuilder, XMLParser } from 'fast-xml-parser';

export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** A value of an element: text, a number, a boolean, nested elements, or a list (repeated elements). */
export type XmlValue = string | number | boolean | XmlElement | XmlValue[];
export interface XmlElement {
  [name: string]: XmlValue | undefined;
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', suppressEmptyNode: false, format: false });
const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: true, processEntities: true, htmlEntities: true });
// Object keys may begin or end with spaces, so a body naming keys (DeleteObjects) keeps every value as sent.
const untrimmedParser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: false, processEntities: true, htmlEntities: true });

/** A whole document with one root element; `namespaced` adds S3's xmlns (error bodies have none). */
export function xmlDocument(root: string, content: XmlElement | string, namespaced = true): string {
  const body: XmlElement | string = namespaced ? { '@_xmlns': S3_NAMESPACE, ...(typeof content === 'string' ? { '#text': content } : content) } : content;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ [root]: body })}`;
}

/** A small XML body (CreateBucketConfiguration and the like), or null when it is not XML; `trim: false` keeps values' spaces. */
export function parseXml(text: string, options: { trim?: boolean } = {}): Record<string, unknown> | null {
  try {
    const parsed: unknown = (options.trim === false ? untrimmedParser : parser).parse(text, true);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A parsed element's repeated child as a list: none, one, or many. */
export const asList = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** A parsed element's child by name, or undefined when the value is not an element. */
export const field = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
