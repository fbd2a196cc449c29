import { useEffect, useState } from 'react';
import type { BucketObject, StorageBucket } from '@pail/shared';
import { deleteFile, listFiles } from '../../api/buckets';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Icon } from '../../components/icons';
import { EmptyState, ErrorState, Loading, Spinner } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useDebounced } from '../../hooks/use-debounced';
import { useToast } from '../../hooks/toast';
import { formatBytes } from '../../lib/format';
import { FileTable } from './file-table';
import { PreviewDialog } from './preview-dialog';

export const PAGE_SIZE = 50;

interface Props {
  bucket: StorageBucket;
  /** Bumped by the parent after uploads, to refresh the current page. */
  version: number;
  onChanged: () => void;
  onPickFiles: () => void;
}

/** Search by prefix, page with the server's cursor, preview, delete. */
export function FileBrowser({ bucket, version, onChanged, onPickFiles }: Props) {
  const [search, setSearch] = useState('');
  const prefix = useDebounced(search.trim() === '' ? '' : search, 250);
  // cursors[i] is the cursor that fetches page i; page 0 has none.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState(0);
  const [previewing, setPreviewing] = useState<BucketObject | null>(null);
  const [deleting, setDeleting] = useState<BucketObject | null>(null);
  const { notify } = useToast();

  useEffect(() => {
    setCursors([null]);
    setPage(0);
  }, [prefix]);

  const cursor = cursors[page] ?? null;
  const files = useAsync((signal) => listFiles(bucket.id, { prefix, limit: PAGE_SIZE, cursor }, signal), [bucket.id, prefix, cursor]);
  const { reload } = files;
  useEffect(() => {
    if (version > 0) reload();
  }, [version, reload]);

  const nextCursor = files.data?.next_cursor ?? null;
  const objects = files.data?.data;
  const searching = prefix !== '';

  const goNext = () => {
    if (!nextCursor) return;
    setCursors((list) => [...list.slice(0, page + 1), nextCursor]);
    setPage((p) => p + 1);
  };

  return (
    <section className="card" aria-labelledby="files-title">
      <header className="card-header card-header-wrap">
        <h2 id="files-title" className="card-title">
          Files
        </h2>
        <div className="search">
          <Icon name="search" className="search-icon" />
          <label htmlFor="file-search" className="sr-only">
            Search files by name prefix
          </label>
          <input
            id="file-search"
            className="input search-input"
            type="search"
            placeholder="Search by prefix…"
            autoComplete="off"
            spellCheck={false}
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          {files.refreshing && objects ? <Spinner size={14} /> : null}
        </div>
      </header>

      {files.loading ? (
        <Loading label="Loading files…" />
      ) : files.error ? (
        <ErrorState title="Could not load the files" error={files.error} onRetry={files.reload} />
      ) : objects && objects.length === 0 ? (
        searching ? (
          <EmptyState icon="search" title="No matching files">
            <p>No file name starts with “{prefix}”. Search matches the beginning of names and is case-sensitive.</p>
          </EmptyState>
        ) : page > 0 ? (
          <EmptyState
            icon="file"
            title="This page is empty"
            action={
              <button type="button" className="btn btn-secondary" onClick={() => setPage(0)}>
                Back to the first page
              </button>
            }
          />
        ) : (
          <EmptyState
            icon="upload"
            title="This bucket is empty"
            action={
              <button type="button" className="btn btn-primary" onClick={onPickFiles}>
                <Icon name="upload" /> Choose files
              </button>
            }
          >
            <p>Drag files here, or choose them from your device.</p>
          </EmptyState>
        )
      ) : objects ? (
        <>
          <FileTable bucketId={bucket.id} objects={objects} onPreview={setPreviewing} onDelete={setDeleting} />
          {page > 0 || nextCursor ? (
            <nav className="pager" aria-label="File pages">
              <button type="button" className="btn btn-secondary btn-small" onClick={() => setPage((p) => Math.max(0, p - 1))} disabled={page === 0}>
                <Icon name="chevronLeft" size={16} /> Previous
              </button>
              <span className="pager-info" aria-live="polite">
                Page {page + 1} · files {page * PAGE_SIZE + 1}–{page * PAGE_SIZE + objects.length}
                {searching ? '' : ` of ${bucket.object_count.toLocaleString()}`}
              </span>
              <button type="button" className="btn btn-secondary btn-small" onClick={goNext} disabled={!nextCursor}>
                Next <Icon name="chevronRight" size={16} />
              </button>
            </nav>
          ) : null}
        </>
      ) : null}

      <PreviewDialog object={previewing} bucketId={bucket.id} isPublic={bucket.public} onClose={() => setPreviewing(null)} />
      <ConfirmDialog
        open={deleting !== null}
        title={deleting ? `Delete “${deleting.filename}”?` : 'Delete file'}
        confirmLabel="Delete file"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await deleteFile(bucket.id, deleting.filename);
          notify(`${deleting.filename} deleted`);
          onChanged();
        }}
      >
        {deleting ? (
          <p>
            This permanently deletes <strong>{deleting.filename}</strong> ({formatBytes(deleting.size)}) from <strong>{bucket.name}</strong>. Its URL will stop
            working.
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}
