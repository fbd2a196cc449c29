import { useEffect, useRef } from 'react';
import type { Selection } from '../../hooks/use-selection';

/** A row's checkbox; a shift-click selects (or clears) the range from the last one clicked. */
export function SelectBox({ name, checked, onToggle }: { name: string; checked: boolean; onToggle: (range: boolean) => void }) {
  return (
    <input
      type="checkbox"
      className="select-box"
      aria-label={`Select ${name}`}
      checked={checked}
      // The click (also fired by Space) says whether Shift was held; the change event does not.
      onClick={(event) => onToggle(event.shiftKey)}
      onChange={() => {}}
    />
  );
}

/** Selects every file and folder on the page; shows a dash when only some are. */
export function SelectAllBox({ selection, disabled }: { selection: Selection; disabled: boolean }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = selection.some;
  }, [selection.some]);
  return (
    <input
      ref={ref}
      type="checkbox"
      className="select-box"
      aria-label="Select everything on this page"
      checked={selection.all}
      disabled={disabled}
      onChange={selection.toggleAll}
    />
  );
}
