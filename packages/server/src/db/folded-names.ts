/**
 * Names folded for case-insensitive search, computed here in JavaScript and
 * stored beside each name (`objects.name_folded`): SQLite's lower() and LIKE
 * know only ASCII, and PostgreSQL's depend on the database's collation, so
 * folding in SQL would find different files on the two dialects.
 */

/**
 * NFC first, so a name typed on macOS (é as e + U+0301) matches one typed
 * elsewhere; upper then lower case, which applies Unicode's full mappings
 * (Straße → STRASSE → strasse, so "strasse" finds it); and the final sigma
 * made an ordinary one, since lower case picks ς or σ from the letters around.
 */
export function foldName(name: string): string {
  // ASCII (most names) is its own NFC, and upper then lower case is lower case there: one call instead of four.
  if (ASCII.test(name)) return name.toLowerCase();
  return name.normalize('NFC').toUpperCase().toLowerCase().replaceAll('ς', 'σ');
}

const ASCII = /^[\p{ASCII}]*$/u;

/** `text` for a LIKE pattern with `\` as its escape: `%`, `_` and `\` match only themselves. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
