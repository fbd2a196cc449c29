import { useCallback, useMemo, useRef, useState } from 'react';

export interface Selection {
  selected: ReadonlySet<string>;
  /** Every key on the page is selected (and there is at least one). */
  all: boolean;
  /** Some but not all: the header checkbox shows a dash. */
  some: boolean;
  /** Flips one key; with `range`, every key from the last one clicked to this one takes its new state, as in file managers. */
  toggle: (key: string, range: boolean) => void;
  toggleAll: () => void;
  clear: () => void;
}

/**
 * Checkboxes over the keys of the page shown. Keys that leave the page (a
 * new page, a search, a delete) leave the selection too, so a bulk action
 * never acts on something the user cannot see.
 */
export function useSelection(keys: readonly string[]): Selection {
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const anchor = useRef<string | null>(null);
  const selected = useMemo(() => new Set(keys.filter((key) => chosen.has(key))), [keys, chosen]);

  const toggle = useCallback(
    (key: string, range: boolean) => {
      // Read now: React runs the updater later, after the anchor below has moved to this key.
      const from = anchor.current === null ? -1 : keys.indexOf(anchor.current);
      setChosen((current) => {
        const next = new Set([...current].filter((k) => keys.includes(k)));
        const on = !next.has(key);
        const to = keys.indexOf(key);
        const span = range && from !== -1 && to !== -1 ? keys.slice(Math.min(from, to), Math.max(from, to) + 1) : [key];
        for (const k of span) {
          if (on) next.add(k);
          else next.delete(k);
        }
        return next;
      });
      anchor.current = key;
    },
    [keys],
  );

  const all = keys.length > 0 && selected.size === keys.length;
  const toggleAll = useCallback(() => setChosen(all ? new Set() : new Set(keys)), [all, keys]);
  const clear = useCallback(() => {
    anchor.current = null;
    setChosen(new Set());
  }, []);

  return { selected, all, some: selected.size > 0 && !all, toggle, toggleAll, clear };
}
