/**
 * Where the names under a prefix end, for listings that fold a common prefix
 * and continue after it (domain/objects.ts, version-listing.ts), and for every
 * query of the names under a prefix (startingWith). Names compare by
 * their UTF-8 bytes, which keep code point order, so the first name after
 * every name starting with `prefix` is the prefix with its last code point
 * moved one on.
 */

const HIGHEST_CODE_POINT = 0x10ffff;
const FIRST_SURROGATE = 0xd800;
const PAST_SURROGATES = 0xe000;

/**
 * The first name after every name that starts with `prefix` (`a/b/` → `a/b0`),
 * or null when no name comes after them (the prefix is U+10FFFF only). Whole
 * code points are moved on, never a surrogate half: moving the low half of
 * U+1F7FF gave a string that sorts before the prefix, and a listing that
 * continued from there read the same rows forever.
 */
export function pastPrefix(prefix: string): string | null {
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < HIGHEST_CODE_POINT) {
      // Surrogates are no characters (UTF-8 has none): the next one after U+D7FF is U+E000.
      const next = last + 1 === FIRST_SURROGATE ? PAST_SURROGATES : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return null;
}

/**
 * A query narrowed to rows whose `column` starts with `prefix`, as a range
 * its index can use: from the prefix up to pastPrefix (not `prefix` +
 * U+10FFFF, which left out a name holding U+10FFFF right after the prefix).
 * For Kysely's `$call`.
 */
export function startingWith(column: string, prefix: string) {
  return <Q extends Narrowable>(q: Q): Q => {
    if (prefix === '') return q;
    const from = q.where(column, '>=', prefix) as Q;
    const end = pastPrefix(prefix);
    return end === null ? from : (from.where(column, '<', end) as Q);
  };
}

/** What startingWith needs of a query builder: a where(column, operator, value). */
interface Narrowable {
  where(column: string, operator: '>=' | '<', value: string): unknown;
}
