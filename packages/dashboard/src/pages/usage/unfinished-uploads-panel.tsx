/**
 * The user's unfinished uploads as the server has them (api/unfinished.ts):
 * from this browser, another one, the SDK or an S3 tool. Each holds bytes of
 * the cap until it finishes, expires or is cancelled here; a resumable one
 * goes on when the same file is chosen again. Uploads this tab is sending are
 * the tray's, not listed here.
 */
import { useEffect, useRef, useState } from 'react';
import { listUnfinishedUploads, resumableUploadUrl, type ServerUnfinishedUpload } from '../../api/unfinished';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorState, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useUploadQueue, isRunning } from '../../hooks/upload-queue';
import { formatBytes, formatDateTime, pluralize } from '../../lib/format';

function progressText(upload: ServerUnfinishedUpload): string {
  if (upload.kind === 'multipart') return `S3 multipart · ${pluralize(upload.parts ?? 0, 'part')} kept`;
  return `${formatBytes(upload.received_bytes)} of ${formatBytes(upload.length ?? 0)} received`;
}

function Row({ upload, onCancel }: { upload: ServerUnfinishedUpload; onCancel: () => void }) {
  const { continueUnfinished } = useUploadQueue();
  const picker = useRef<HTMLInputElement>(null);
  const name = upload.filename;
  return (
    <tr aria-label={name}>
      <th scope="row" className="cell-name">
        <span className="unfinished-name" title={name}>
          {name}
        </span>
        <span className="muted small"> in {upload.bucket_name}</span>
      </th>
      <td data-label="Held">{formatBytes(upload.held_bytes)}</td>
      <td data-label="Progress">{progressText(upload)}</td>
      <td data-label="Last activity">{formatDateTime(upload.updated_at)}</td>
      <td className="cell-actions">
        {upload.kind === 'resumable' ? (
          <>
            <input
              ref={picker}
              type="file"
              hidden
              aria-label={`Choose ${name} again to go on`}
              onChange={(event) => {
                const file = event.target.files?.[0];
                event.target.value = '';
                if (!file) return;
                const url = resumableUploadUrl(upload);
                void continueUnfinished(
                  { key: url, bucketId: upload.bucket_id, filename: name, size: upload.length ?? 0, offset: upload.offset ?? 0, url },
                  file,
                );
              }}
            />
            <button type="button" className="btn btn-ghost btn-small" onClick={() => picker.current?.click()}>
              Choose file
            </button>
          </>
        ) : null}
        <button type="button" className="btn btn-secondary btn-small btn-danger-text" aria-label={`Cancel upload of ${name}`} onClick={onCancel}>
          Cancel upload
        </button>
      </td>
    </tr>
  );
}

export function UnfinishedUploadsPanel() {
  const { items, cancelUnfinished, onFinished } = useUploadQueue();
  const list = useAsync((signal) => listUnfinishedUploads(signal), []);
  const { reload } = list;
  // An upload that lands is no longer unfinished.
  useEffect(() => onFinished(() => reload()), [onFinished, reload]);
  const [cancelling, setCancelling] = useState<ServerUnfinishedUpload | null>(null);
  // What this tab is sending (or has paused) is the tray's to show.
  const mine = (upload: ServerUnfinishedUpload) =>
    items.some((item) => item.bucketId === upload.bucket_id && item.name === upload.filename && (isRunning(item) || item.status === 'paused'));
  const uploads = (list.data?.data ?? []).filter((upload) => !mine(upload));

  return (
    <section className="card card-pad" aria-labelledby="unfinished-title">
      <h2 id="unfinished-title" className="card-title">
        Unfinished uploads
      </h2>
      {list.loading ? (
        <Loading label="Loading unfinished uploads…" />
      ) : list.error ? (
        <ErrorState title="Could not load unfinished uploads" error={list.error} onRetry={list.reload} />
      ) : uploads.length === 0 ? (
        <p className="muted small">None: nothing holds storage but your files.</p>
      ) : (
        <>
          <p className="muted small" data-testid="unfinished-summary">
            {pluralize(uploads.length, 'unfinished upload')} holding {formatBytes(uploads.reduce((sum, u) => sum + u.held_bytes, 0))} of your storage. Choose
            the same file to go on with one, or cancel it to free its space.
          </p>
          <table className="table table-responsive table-flush">
            <caption className="sr-only">Unfinished uploads</caption>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Held</th>
                <th scope="col">Progress</th>
                <th scope="col">Last activity</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {uploads.map((upload) => (
                <Row key={`${upload.kind}:${upload.id}`} upload={upload} onCancel={() => setCancelling(upload)} />
              ))}
            </tbody>
          </table>
        </>
      )}
      <ConfirmDialog
        open={cancelling !== null}
        title="Cancel upload?"
        confirmLabel="Cancel upload"
        onConfirm={async () => {
          if (!cancelling) return;
          await cancelUnfinished(cancelling);
          list.reload();
        }}
        onClose={() => setCancelling(null)}
      >
        <p>
          The {formatBytes(cancelling?.received_bytes ?? 0)} received of {cancelling?.filename} are deleted, and the {formatBytes(cancelling?.held_bytes ?? 0)}{' '}
          it holds are free again.
        </p>
      </ConfirmDialog>
    </section>
  );
}
