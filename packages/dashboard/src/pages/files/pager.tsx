import { Icon } from '../../components/icons';

interface Props {
  page: number;
  first: number;
  last: number;
  unit: 'items' | 'files';
  onPrevious: () => void;
  /** Null on the last page. */
  onNext: (() => void) | null;
}

export function Pager({ page, first, last, unit, onPrevious, onNext }: Props) {
  return (
    <nav className="pager" aria-label="File pages">
      <button type="button" className="btn btn-secondary btn-small" onClick={onPrevious} disabled={page <= 1}>
        <Icon name="chevronLeft" size={16} /> Previous
      </button>
      {/* No "of N": the bucket's object count includes everything in its folders, and a page counts folders too. */}
      <span className="pager-info" aria-live="polite">
        Page {page} · {unit} {first}–{last}
      </span>
      <button type="button" className="btn btn-secondary btn-small" onClick={onNext ?? undefined} disabled={onNext === null}>
        Next <Icon name="chevronRight" size={16} />
      </button>
    </nav>
  );
}
