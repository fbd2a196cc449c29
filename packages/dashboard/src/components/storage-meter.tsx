import { useSession } from '../hooks/session';
import { formatBytes, formatPercent } from '../lib/format';
import { Link } from './link';
import { ProgressBar } from './progress-bar';

/** Space used of the plan's cap, on every page: the number that decides whether the next upload fits. Opens the Usage page. */
export function StorageMeter() {
  const { user } = useSession();
  if (!user) return null;
  const used = user.storage_used_bytes;
  const limit = user.storage_limit_bytes;
  const fraction = limit > 0 ? used / limit : 0;
  const text = `${formatBytes(used)} of ${formatBytes(limit)}`;
  return (
    <Link to="/usage" className="storage-meter" aria-label={`Storage: ${text} used (${formatPercent(fraction)})`} title={`${text} used`}>
      <span className="storage-meter-text" data-testid="storage-meter">
        {text}
      </span>
      <ProgressBar
        value={used}
        max={limit}
        label="Plan storage"
        valueText={text}
        tone={fraction >= 0.9 ? 'danger' : fraction >= 0.75 ? 'warning' : 'default'}
      />
    </Link>
  );
}
