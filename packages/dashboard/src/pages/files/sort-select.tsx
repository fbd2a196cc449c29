import type { SortColumn, SortOrder } from '../../lib/browse-view';

const CHOICES: { label: string; sort: SortColumn; order: SortOrder }[] = [
  { label: 'Name, A to Z', sort: 'name', order: 'asc' },
  { label: 'Name, Z to A', sort: 'name', order: 'desc' },
  { label: 'Largest first', sort: 'size', order: 'desc' },
  { label: 'Smallest first', sort: 'size', order: 'asc' },
  { label: 'Type, A to Z', sort: 'type', order: 'asc' },
  { label: 'Type, Z to A', sort: 'type', order: 'desc' },
  { label: 'Newest first', sort: 'updated', order: 'desc' },
  { label: 'Oldest first', sort: 'updated', order: 'asc' },
];

/** The sort on narrow screens, where the table shows as cards without its column headers. */
export function SortSelect({ sort, order, onSort }: { sort: SortColumn; order: SortOrder; onSort: (sort: SortColumn, order: SortOrder) => void }) {
  return (
    <div className="sort-select">
      <label className="sr-only" htmlFor="file-sort">
        Sort files
      </label>
      <select
        id="file-sort"
        className="input select"
        value={`${sort}:${order}`}
        onChange={(e) => {
          const choice = CHOICES.find((c) => `${c.sort}:${c.order}` === e.target.value);
          if (choice) onSort(choice.sort, choice.order);
        }}
      >
        {CHOICES.map((c) => (
          <option key={`${c.sort}:${c.order}`} value={`${c.sort}:${c.order}`}>
            {c.label}
          </option>
        ))}
      </select>
    </div>
  );
}
