import type { SortColumn, SortOrder } from '../../lib/browse-view';
import { Icon } from '../../components/icons';

interface Props {
  column: SortColumn;
  label: string;
  sort: SortColumn;
  order: SortOrder;
  onSort: (column: SortColumn, order: SortOrder) => void;
  className?: string;
}

/** A column header that sorts by its column: a first click ascending, the next one the other way. */
export function SortHeader({ column, label, sort, order, onSort, className }: Props) {
  const active = sort === column;
  const next: SortOrder = active && order === 'asc' ? 'desc' : 'asc';
  return (
    <th scope="col" className={className} aria-sort={active ? (order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button
        type="button"
        className={`sort-button${active ? ' sort-active' : ''}`}
        onClick={() => onSort(column, next)}
        title={`Sort by ${label.toLowerCase()}`}
      >
        <span>{label}</span>
        <Icon name={active && order === 'desc' ? 'chevronDown' : 'chevronUp'} size={14} className={active ? 'sort-icon' : 'sort-icon sort-icon-idle'} />
      </button>
    </th>
  );
}
