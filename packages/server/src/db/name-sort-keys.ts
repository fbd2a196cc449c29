/**
 * The order of "sort by name" in the file browser, as a file manager sorts:
 * case-insensitive (Unicode folding, db/folded-names.ts) and natural (`file2`
 * before `file10`). It is computed here and stored beside each name
 * (`objects.name_sort`), then compared as bytes (SQLite's BINARY, PostgreSQL's
 * `collate "C"`): the two databases' own collations differ, and neither knows
 * natural order, so a key both compare the same way keeps one order and one
 * cursor on both.
 *
 * Each `/`-separated part becomes its folded, natural form, then U+0001, then
 * the part as written (so `Report` and `report` differ, the first one
 * first, and no two names share a key); the parts stay joined by `/`. A
 * folder's key is therefore a prefix of the keys of everything in it, so a
 * folder's contents form one range of keys, as they form one range of names.
 * U+0001 sorts below every character a name may hold (no control characters,
 * names.ts): `a` before `ab`, and a file before what follows it in a longer
 * name. In the natural form a run of digits becomes its length, then the
 * digits without leading zeros, the length itself led by its own number of
 * digits: `2` → `112`, `10` → `1210`, a 120-digit number `3120…`; so
 * shorter numbers come first, equal lengths by their digits.
 */
import { foldName } from './folded-names.js';

const PART_END = '\u0001';

export function nameSortKey(filename: string): string {
  let key = '';
  let start = 0;
  for (;;) {
    const end = filename.indexOf('/', start);
    const part = end === -1 ? filename.slice(start) : filename.slice(start, end);
    if (part !== '') key += naturalForm(foldName(part)) + PART_END + part;
    if (end === -1) return key;
    key += '/';
    start = end + 1;
  }
}

/** Each run of digits as its length's length, its length, then its digits without leading zeros (read once, char by char: this runs on every upload). */
function naturalForm(text: string): string {
  let out = '';
  let copiedTo = 0;
  for (let i = 0; i < text.length; i++) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let end = i + 1;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    let first = i;
    while (first < end && text.charCodeAt(first) === ZERO) first++;
    const length = String(end - first);
    out += text.slice(copiedTo, i) + length.length + length + text.slice(first, end);
    copiedTo = end;
    i = end - 1;
  }
  return copiedTo === 0 ? text : out + text.slice(copiedTo);
}

const ZERO = 48;
const isDigit = (code: number): boolean => code >= ZERO && code <= 57;
