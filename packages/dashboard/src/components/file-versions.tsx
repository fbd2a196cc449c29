/**
 * A file's versions in its details panel, newest first: each one's time and
 * size, a download of it, and a restore (a copy of it becomes the current
 * version; nothing is lost). Delete markers say when the file was deleted.
 */
import '../styles/history.css';
import { useState } from 'react';
import { listVersions, restoreVersion, versionUrl, type FileVersion } from '../api/history';
import { useAsync } from '../hooks/use-async';
import { useToast } from '../hooks/toast';
import { baseName } from '../lib/folders';
import { formatBytes, formatDateTime } from '../lib/format';
import { describeDeleter } from '../lib/trash';
import { Icon } from './icons';
import { ErrorState, InlineError, Loading, Spinner } from './states';

export function FileVersionsList({ bucketId, filename, onRestored }: { bucketId: number; filename: string; onRestored: () => void }) {
  const versions = useAsync((signal) => listVersions(bucketId, filename, signal), [bucketId, filename]);
  const { notify } = useToast();
  const [restoring, setRestoring] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const restore = async (version: FileVersion) => {
    setRestoring(version.version_id);
    setError(null);
    try {
      await restoreVersion(bucketId, filename, version.version_id);
      notify(`Restored the version of ${formatDateTime(version.created_at)}`);
      versions.reload();
      onRestored();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setRestoring(null);
    }
  };

  if (versions.loading && !versions.data) return <Loading label="Loading the versions…" />;
  if (versions.error && !versions.data) return <ErrorState title="Could not load the versions" error={versions.error} onRetry={versions.reload} />;
  const list = versions.data ?? [];
  return (
    <div className="file-versions">
      <p className="field-hint">
        {list.length <= 1
          ? 'Only this version is kept. Turn on the trash in the bucket’s settings to keep replaced and deleted versions.'
          : 'Older versions are kept while the bucket’s trash keeps them. Restoring one makes a copy of it the current version.'}
      </p>
      {error ? <InlineError>{error}</InlineError> : null}
      <ol className="version-list" aria-label="Versions">
        {list.map((version) => (
          <li key={version.version_id} className="version-row" data-testid="version-row">
            <div className="version-info">
              <span className="version-time">
                <time dateTime={version.created_at}>{formatDateTime(version.created_at)}</time>
                {version.is_latest ? <span className="badge">Current</span> : null}
              </span>
              <span className="muted">{version.is_delete_marker ? `Deleted by ${describeDeleter(version.deleted_by)}` : formatBytes(version.size)}</span>
            </div>
            {version.is_delete_marker ? null : (
              <div className="version-actions">
                <a
                  className="btn btn-ghost btn-small"
                  href={versionUrl(bucketId, filename, version.version_id)}
                  download={baseName(filename)}
                  aria-label={`Download the version of ${formatDateTime(version.created_at)}`}
                >
                  <Icon name="download" size={16} /> Download
                </a>
                {version.is_latest ? null : (
                  <button
                    type="button"
                    className="btn btn-secondary btn-small"
                    disabled={restoring !== null}
                    aria-label={`Restore the version of ${formatDateTime(version.created_at)}`}
                    onClick={() => void restore(version)}
                  >
                    {restoring === version.version_id ? <Spinner size={14} /> : <Icon name="refresh" size={16} />} Restore
                  </button>
                )}
              </div>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
