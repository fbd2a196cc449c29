/**
 * The editable part of a file's details as the form holds it, and the PATCH
 * that turns the saved details into the draft: metadata replaced whole when it
 * changed, each header sent when it changed (empty: `null`, removed).
 */
import type { EditFile, FileDetails } from '@pail/shared';

export type HeaderField = 'content_type' | 'cache_control' | 'content_disposition' | 'content_encoding' | 'content_language' | 'expires';

export const HEADER_FIELDS: { field: HeaderField; label: string; placeholder: string }[] = [
  { field: 'content_type', label: 'Content type', placeholder: 'text/plain' },
  { field: 'cache_control', label: 'Cache control', placeholder: 'max-age=3600' },
  { field: 'content_disposition', label: 'Content disposition', placeholder: 'attachment; filename="report.pdf"' },
  { field: 'content_encoding', label: 'Content encoding', placeholder: 'gzip' },
  { field: 'content_language', label: 'Content language', placeholder: 'en' },
  { field: 'expires', label: 'Expires', placeholder: 'Thu, 01 Jan 2030 00:00:00 GMT' },
];

export interface Draft {
  /** In the order shown; `key` keeps React's rows apart while names are typed. */
  metadata: { key: number; name: string; value: string }[];
  nextKey: number;
  headers: Record<HeaderField, string>;
}

export function draftOf(details: FileDetails): Draft {
  const metadata = Object.entries(details.metadata).map(([name, value], key) => ({ key, name, value }));
  const headers = Object.fromEntries(HEADER_FIELDS.map(({ field }) => [field, details[field] ?? ''])) as Record<HeaderField, string>;
  return { metadata, nextKey: metadata.length, headers };
}

/** An HTTP header name (a token); the server keeps it in lower case. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function draftProblem(draft: Draft): string | null {
  const seen = new Set<string>();
  for (const { name, value } of draft.metadata) {
    const key = name.trim().toLowerCase();
    if (key === '' && value === '') continue;
    if (key === '') return 'Give every metadata value a name.';
    if (!TOKEN.test(key)) return `“${name}” cannot be a metadata name: use letters, digits and - _ . only.`;
    if (seen.has(key)) return `The metadata name “${key}” is there twice.`;
    seen.add(key);
  }
  if (draft.headers.content_type.trim() === '') return 'A file needs a content type.';
  return null;
}

/** The PATCH body from `saved` to `draft`, or null when nothing changed. */
export function editOf(saved: FileDetails, draft: Draft): EditFile | null {
  const edit: EditFile = {};
  const metadata = Object.fromEntries(draft.metadata.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim().toLowerCase(), row.value]));
  if (JSON.stringify(metadata) !== JSON.stringify(saved.metadata)) edit.metadata = metadata;
  for (const { field } of HEADER_FIELDS) {
    const value = draft.headers[field].trim();
    if (value === (saved[field] ?? '')) continue;
    if (field === 'content_type') edit.content_type = value;
    else edit[field] = value === '' ? null : value;
  }
  return Object.keys(edit).length > 0 ? edit : null;
}
