import type { BucketObject } from '@pail/shared';
import { deleteFile } from '../../api/buckets';
import { fileApiPath } from '../../api/http';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Icon } from '../../components/icons';
import { baseName } from '../../lib/folders';
import { formatBytes, pluralize } from '../../lib/format';

/** What can be done with the selected files, shown while some are. */
export function BulkBar({
  files,
  onDownload,
  onDelete,
  onClear,
}: {
  files: BucketObject[];
  onDownload: () => void;
  onDelete: () => void;
  onClear: () => void;
}) {
  if (files.length === 0) return null;
  const bytes = files.reduce((sum, file) => sum + file.size, 0);
  return (
    <div className="bulk-bar" role="region" aria-label="Selected files">
      <span className="bulk-count" aria-live="polite">
        {pluralize(files.length, 'file')} selected · {formatBytes(bytes)}
      </span>
      <div className="bulk-actions">
        <button type="button" className="btn btn-secondary btn-small" onClick={onDownload}>
          <Icon name="download" size={16} /> Download
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

/**
 * Each file downloaded on its own, a moment apart: browsers take several
 * downloads from one click when they come one by one (Chromium asks once
 * whether the site may), and no zip has to be built on either side.
 */
export async function downloadEach(bucketId: number, files: BucketObject[]): Promise<void> {
  for (const [index, file] of files.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, 300));
    const link = document.createElement('a');
    link.href = fileApiPath(bucketId, file.filename);
    link.download = baseName(file.filename);
    document.body.append(link);
    link.click();
    link.remove();
  }
}

const NAMES_SHOWN = 5;

/** One confirmation for the whole selection; files that could not be deleted are named and the rest stay deleted. */
export function BulkDeleteDialog({
  bucketId,
  bucketName,
  files,
  onClose,
  onDeleted,
}: {
  bucketId: number;
  bucketName: string;
  files: BucketObject[] | null;
  onClose: () => void;
  onDeleted: (count: number) => void;
}) {
  const count = files?.length ?? 0;
  return (
    <ConfirmDialog
      open={files !== null}
      title={`Delete ${pluralize(count, 'file')}?`}
      confirmLabel={`Delete ${pluralize(count, 'file')}`}
      onClose={onClose}
      onConfirm={async () => {
        if (!files) return;
        const results = await Promise.allSettled(files.map((file) => deleteFile(bucketId, file.filename)));
        const failed = files.filter((_, index) => results[index]?.status === 'rejected');
        onDeleted(count - failed.length);
        if (failed.length > 0) {
          const reason: unknown = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
          throw new Error(
            `Could not delete ${pluralize(failed.length, 'file')} (${failed.map((f) => f.filename).join(', ')}): ${reason instanceof Error ? reason.message : String(reason)}`,
          );
        }
      }}
    >
      {files ? (
        <div className="prose">
          <p>
            This permanently deletes {pluralize(count, 'file')} ({formatBytes(files.reduce((sum, f) => sum + f.size, 0))}) from <strong>{bucketName}</strong>:
          </p>
          <ul className="bulk-names">
            {files.slice(0, NAMES_SHOWN).map((file) => (
              <li key={file.filename}>{file.filename}</li>
            ))}
            {count > NAMES_SHOWN ? <li>and {pluralize(count - NAMES_SHOWN, 'more file')}</li> : null}
          </ul>
          <p>Their URLs will stop working.</p>
        </div>
      ) : null}
    </ConfirmDialog>
  );
}
