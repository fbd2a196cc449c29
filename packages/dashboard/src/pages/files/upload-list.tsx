import { Icon } from '../../components/icons';
import { ProgressBar } from '../../components/progress-bar';
import { formatBytes, formatDuration, formatPercent, formatSpeed } from '../../lib/format';
import type { UploadItem } from '../../hooks/use-uploads';

interface Props {
  items: UploadItem[];
  onCancel: (id: string) => void;
  onRetry: (id: string) => void;
  onClear: () => void;
}

/** Keeps "128.3 KiB/s" or "3 s left" on one line when the status wraps on a phone. */
const keep = (text: string) => text.replace(/ /g, '\u00a0');

function statusLine(item: UploadItem): string {
  switch (item.status) {
    case 'queued':
      return `Waiting · ${keep(formatBytes(item.size))}`;
    case 'uploading': {
      const remaining = item.speed > 0 ? (item.size - item.loaded) / item.speed : NaN;
      const eta = formatDuration(remaining);
      return [keep(`${formatBytes(item.loaded)} of ${formatBytes(item.size)}`), keep(formatSpeed(item.speed)), eta ? keep(`${eta} left`) : null]
        .filter(Boolean)
        .join(' · ');
    }
    case 'processing':
      return `${keep(formatBytes(item.size))} sent · finishing…`;
    case 'done':
      return `${item.result?.updated ? 'Replaced' : 'Uploaded'} · ${keep(formatBytes(item.size))}`;
    case 'cancelled':
      return 'Cancelled';
    case 'error':
      return 'Failed';
  }
}

function hint(item: UploadItem): string | null {
  if (item.errorKind === 'storage-cap') return 'Delete files you no longer need, or ask the operator for a larger plan.';
  if (item.errorKind === 'file-cap') return 'This file is larger than the server allows for a single file.';
  return null;
}

export function UploadList({ items, onCancel, onRetry, onClear }: Props) {
  if (items.length === 0) return null;
  const finished = items.filter((i) => i.status === 'done' || i.status === 'error' || i.status === 'cancelled').length;
  const done = items.filter((i) => i.status === 'done').length;

  return (
    <section className="card uploads" aria-labelledby="uploads-title">
      <header className="card-header">
        <h2 id="uploads-title" className="card-title">
          Uploads{' '}
          <span className="muted">
            ({done} of {items.length} done)
          </span>
        </h2>
        {finished > 0 ? (
          <button type="button" className="btn btn-ghost btn-small" onClick={onClear}>
            Clear finished
          </button>
        ) : null}
      </header>
      <ul className="upload-list" aria-label="Upload progress">
        {items.map((item) => {
          const fraction = item.size > 0 ? item.loaded / item.size : item.status === 'done' ? 1 : 0;
          const running = item.status === 'uploading' || item.status === 'processing' || item.status === 'queued';
          const tone = item.status === 'done' ? 'success' : item.status === 'error' ? 'danger' : item.status === 'cancelled' ? 'warning' : 'default';
          const extra = hint(item);
          return (
            <li key={item.id} className={`upload upload-${item.status}`} aria-label={item.name}>
              <div className="upload-icon" aria-hidden="true">
                <Icon name={item.status === 'done' ? 'check' : item.status === 'error' ? 'alert' : item.status === 'cancelled' ? 'x' : 'upload'} />
              </div>
              <div className="upload-main">
                <div className="upload-top">
                  <span className="upload-name" title={item.name}>
                    {item.name}
                  </span>
                  <span className="upload-percent">{item.status === 'error' || item.status === 'cancelled' ? '' : formatPercent(fraction)}</span>
                </div>
                <ProgressBar
                  value={item.status === 'done' ? 1 : fraction}
                  max={1}
                  label={`Upload of ${item.name}`}
                  valueText={statusLine(item)}
                  tone={tone}
                  indeterminate={item.status === 'processing'}
                />
                <div className="upload-status" aria-live={item.status === 'error' ? 'assertive' : 'off'}>
                  {item.status === 'error' ? (
                    <span className="upload-error" role="alert">
                      {item.error}
                      {extra ? <span className="upload-hint"> {extra}</span> : null}
                    </span>
                  ) : (
                    statusLine(item)
                  )}
                </div>
              </div>
              <div className="upload-actions">
                {running ? (
                  <button type="button" className="btn btn-ghost btn-small" aria-label={`Cancel upload of ${item.name}`} onClick={() => onCancel(item.id)}>
                    Cancel
                  </button>
                ) : item.status === 'error' || item.status === 'cancelled' ? (
                  <button type="button" className="btn btn-ghost btn-small" aria-label={`Retry upload of ${item.name}`} onClick={() => onRetry(item.id)}>
                    Retry
                  </button>
                ) : null}
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
