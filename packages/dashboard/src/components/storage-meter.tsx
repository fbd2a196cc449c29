import { useSession } from '../hooks/session';
import { formatBytes, formatPercent } from '../lib/format';
import { Link } from './link';
import { ProgressBar } from './progress-bar';

/**
 * Space used of the plan's cap, on every page: the number that decides whether
 * the next upload fits. Bytes held by unfinished uploads count against the cap
 * too, so they show beside it. Opens the Usage page, which lists them.
 */
export function StorageMeter() {
  const { user } = useSession();
  if (!user) return null;
  const used = user.storage_used_bytes;
  // A server from before held bytes were shown sends none.
  const held = user.storage_held_bytes ?? 0;
  const limit = user.storage_limit_bytes;
  const fraction = limit > 0 ? (used + held) / limit : 0;
  const text = `${formatBytes(used)} of ${formatBytes(limit)}`;
  const heldText = held > 0 ? `${formatBytes(held)} held by unfinished uploads` : '';
  return (
    <Link
      to="/usage"
      className="storage-meter"
      aria-label={`Storage: ${text} used${heldText ? `, ${heldText}` : ''} (${formatPercent(fraction)})`}
      title={`${text} used${heldText ? `; ${heldText}` : ''}`}
    >
      <span className="storage-meter-text" data-testid="storage-meter">
        {text}
      </span>
      {held > 0 ? (
        <span className="storage-meter-held" data-testid="storage-held">
          +{formatBytes(held)} held
        </span>
      ) : null}
      <ProgressBar
        value={used + held}
        max={limit}
        label="Plan storage"
        valueText={`${text}${heldText ? `, ${heldText}` : ''}`}
        tone={fraction >= 0.9 ? 'danger' : fraction >= 0.75 ? 'warning' : 'default'}
      />
    </Link>
  );
}
