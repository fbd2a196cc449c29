import type { StorageBucket } from '@pail/shared';
import { Link } from '../../components/link';
import { formatBytes, formatPercent } from '../../lib/format';

/**
 * A horizontal bar chart of bucket sizes, built as a list so screen readers
 * read each bucket's name and size (the bars themselves are decoration).
 */
export function BucketChart({ buckets }: { buckets: StorageBucket[] }) {
  const sorted = [...buckets].sort((a, b) => b.total_bytes - a.total_bytes || a.name.localeCompare(b.name));
  const largest = Math.max(1, ...sorted.map((b) => b.total_bytes));
  const total = sorted.reduce((sum, b) => sum + b.total_bytes, 0);

  return (
    <ul className="chart" aria-label="Size of each bucket">
      {sorted.map((bucket) => {
        const width = (bucket.total_bytes / largest) * 100;
        return (
          <li key={bucket.id} className="chart-row">
            <Link to={`/buckets/${bucket.id}`} className="chart-label">
              {bucket.name}
            </Link>
            <div className="chart-track" aria-hidden="true">
              <div className="chart-bar" style={{ width: `${bucket.total_bytes > 0 ? Math.max(width, 1) : 0}%` }} />
            </div>
            <span className="chart-value">
              {formatBytes(bucket.total_bytes)}
              <span className="muted"> · {formatPercent(total > 0 ? bucket.total_bytes / total : 0)}</span>
            </span>
          </li>
        );
      })}
    </ul>
  );
}
