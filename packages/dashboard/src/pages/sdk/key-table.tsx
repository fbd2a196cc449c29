import type { ApiKey, StorageBucket } from '@pail/shared';
import { Icon } from '../../components/icons';
import { formatDateTime } from '../../lib/format';
import { describeBuckets, describePermissions, isExpired } from './key-limits';

interface Props {
  keys: ApiKey[];
  /** To name a key's buckets; undefined while loading. */
  buckets: StorageBucket[] | undefined;
  onRevoke: (key: ApiKey) => void;
}

/** Each key with what it may do: its buckets, permissions and expiry beside the usual dates. */
export function KeyTable({ keys, buckets, onRevoke }: Props) {
  return (
    <table className="table table-responsive table-flush">
      <caption className="sr-only">Your API keys</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          <th scope="col">Buckets</th>
          <th scope="col">Permissions</th>
          <th scope="col">Expires</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id}>
            <th scope="row" className="cell-name">
              <span className="key-name">
                <Icon name="key" /> {key.name}
              </span>
            </th>
            <td data-label="Key">
              <code className="key-prefix">{key.prefix}…</code>
            </td>
            <td data-label="Buckets">{describeBuckets(key, buckets)}</td>
            <td data-label="Permissions">{describePermissions(key)}</td>
            <td data-label="Expires">
              {isExpired(key) ? <span className="text-danger">Expired {formatDateTime(key.expires_at)}</span> : formatDateTime(key.expires_at)}
            </td>
            <td data-label="Created">{formatDateTime(key.created_at)}</td>
            <td data-label="Last used">{formatDateTime(key.last_used_at)}</td>
            <td className="cell-actions">
              <button type="button" className="btn btn-secondary btn-small btn-danger-text" aria-label={`Revoke key ${key.name}`} onClick={() => onRevoke(key)}>
                Revoke
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
