import type { BucketObject } from '@pail/shared';
import { Icon } from '../../components/icons';
import { formatBytes, pluralize } from '../../lib/format';

/** What can be done with the selected files and folders, shown while some are. */
export function BulkBar({
  files,
  folders,
  onDownload,
  onMove,
  onDelete,
  onClear,
}: {
  files: BucketObject[];
  folders: string[];
  onDownload: () => void;
  onMove: () => void;
  onDelete: () => void;
  onClear: () => void;
}) {
  if (files.length === 0 && folders.length === 0) return null;
  const bytes = files.reduce((sum, file) => sum + file.size, 0);
  const what = [folders.length > 0 ? pluralize(folders.length, 'folder') : '', files.length > 0 ? pluralize(files.length, 'file') : '']
    .filter(Boolean)
    .join(' and ');
  // One file downloads as itself; more, or any folder, as one zip.
  const zipped = folders.length > 0 || files.length > 1;
  return (
    <div className="bulk-bar" role="region" aria-label="Selected files">
      <span className="bulk-count" aria-live="polite">
        {what} selected{folders.length === 0 ? ` · ${formatBytes(bytes)}` : ''}
      </span>
      <div className="bulk-actions">
        <button type="button" className="btn btn-secondary btn-small" onClick={onDownload} title={zipped ? 'Download as one zip' : undefined}>
          <Icon name="download" size={16} /> {zipped ? 'Download zip' : 'Download'}
        </button>
        <button type="button" className="btn btn-secondary btn-small" onClick={onMove}>
          <Icon name="moveTo" size={16} /> Move
        </button>
        <button type="button" className="btn btn-secondary btn-small btn-danger-text" onClick={onDelete}>
          <Icon name="trash" size={16} /> Delete
        </button>
        <button type="button" className="btn btn-ghost btn-small" onClick={onClear}>
          Clear selection
        </button>
      </div>
    </div>
  );
}
