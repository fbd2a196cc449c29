/**
 * A bucket's trash (`/buckets/:id/trash`): the files whose latest version is a
 * delete marker, with who deleted them and when, each restorable (a copy of
 * the version before the delete becomes current) or deleted forever (every
 * version of it). Old versions leave by themselves after the bucket's days.
 */
import '../../styles/history.css';
import { useEffect, useState } from 'react';
import { getBucket } from '../../api/buckets';
import { deleteForever, listTrash, restoreFromTrash, type TrashEntry } from '../../api/history';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Icon } from '../../components/icons';
import { PageHeader } from '../../components/layout';
import { Link } from '../../components/link';
import { EmptyState, ErrorState, InlineError, Loading, Spinner } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useSession } from '../../hooks/session';
import { useToast } from '../../hooks/toast';
import { formatBytes, formatDateTime, pluralize } from '../../lib/format';
import { describeDeleter, noncurrentBytesOf, versioningOf } from '../../lib/trash';

export function TrashPage({ bucketId }: { bucketId: number }) {
  const bucket = useAsync((signal) => getBucket(bucketId, signal), [bucketId]);
  const trash = useAsync((signal) => listTrash(bucketId, signal), [bucketId]);
  const { refreshUser } = useSession();
  const { notify } = useToast();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [forgetting, setForgetting] = useState<TrashEntry | null>(null);

  useEffect(() => {
    document.title = `Trash of ${bucket.data?.name ?? 'bucket'} · Pail`;
  }, [bucket.data?.name]);

  const act = async (entry: TrashEntry, what: () => Promise<void>, done: string) => {
    setBusy(entry.filename);
    setError(null);
    try {
      await what();
      notify(done);
      trash.reload();
      bucket.reload();
      void refreshUser();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };

  const b = bucket.data;
  const back = (
    <Link to={`/buckets/${bucketId}`} className="back-link">
      <Icon name="chevronLeft" size={16} /> {b ? b.name : 'Bucket'}
    </Link>
  );
  if ((bucket.loading && !b) || (trash.loading && !trash.data)) return <Loading label="Loading the trash…" />;
  if (bucket.error && !b) return <ErrorState title="Could not load this bucket" error={bucket.error} onRetry={bucket.reload} />;
  if (!b) return null;
  const entries = trash.data ?? [];
  const on = versioningOf(b) === 'enabled';

  return (
    <div className="page">
      {back}
      <PageHeader
        title={<span className="title-text">Trash of {b.name}</span>}
        description={
          <span className="stats">
            <span data-testid="trash-count">{pluralize(entries.length, 'deleted file')}</span>
            <span aria-hidden="true">·</span>
            <span data-testid="noncurrent-bytes">Old versions hold {formatBytes(noncurrentBytesOf(b))}</span>
          </span>
        }
      />
      {on ? null : (
        <p className="notice" role="note">
          The trash is off for this bucket: deleted files are gone at once. Turn it on in the bucket’s settings.
        </p>
      )}
      {error ? <InlineError>{error}</InlineError> : null}
      {trash.error ? (
        <ErrorState title="Could not load the trash" error={trash.error} onRetry={trash.reload} />
      ) : entries.length === 0 ? (
        <EmptyState icon="trash" title="The trash is empty">
          Files deleted from this bucket show here while the trash keeps them.
        </EmptyState>
      ) : (
        <ul className="trash-list" aria-label="Deleted files">
          {entries.map((entry) => (
            <li key={entry.filename} className="trash-row" data-testid="trash-row">
              <div className="trash-info">
                <span className="trash-name">{entry.filename}</span>
                <span className="muted">
                  Deleted by {describeDeleter(entry.deleted_by)} on <time dateTime={entry.deleted_at}>{formatDateTime(entry.deleted_at)}</time> ·{' '}
                  {formatBytes(entry.size)}
                </span>
              </div>
              <div className="trash-actions">
                <button
                  type="button"
                  className="btn btn-secondary btn-small"
                  disabled={busy !== null}
                  aria-label={`Restore ${entry.filename}`}
                  onClick={() => void act(entry, () => restoreFromTrash(bucketId, entry), `${entry.filename} restored`)}
                >
                  {busy === entry.filename ? <Spinner size={14} /> : <Icon name="refresh" size={16} />} Restore
                </button>
                <button
                  type="button"
                  className="btn btn-ghost btn-small btn-danger-text"
                  disabled={busy !== null}
                  aria-label={`Delete ${entry.filename} forever`}
                  onClick={() => setForgetting(entry)}
                >
                  <Icon name="trash" size={16} /> Delete forever
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog
        open={forgetting !== null}
        title="Delete forever?"
        confirmLabel="Delete forever"
        onClose={() => setForgetting(null)}
        onConfirm={async () => {
          const entry = forgetting;
          if (!entry) return;
          await deleteForever(bucketId, entry.filename);
          notify(`${entry.filename} deleted forever`);
          trash.reload();
          bucket.reload();
          void refreshUser();
        }}
      >
        Every kept version of {forgetting?.filename} is deleted. This cannot be undone.
      </ConfirmDialog>
    </div>
  );
}
