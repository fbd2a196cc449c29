import { useEffect, useRef, useState } from 'react';
import { isFolderMarker } from '@pail/shared/names';
import type { BucketObject, StorageBucket } from '@pail/shared';
import { deleteFile, listFiles } from '../../api/buckets';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Icon } from '../../components/icons';
import { EmptyState, ErrorState, Loading, Spinner } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useDebounced } from '../../hooks/use-debounced';
import { useToast } from '../../hooks/toast';
import { formatBytes } from '../../lib/format';
import { Breadcrumbs } from './breadcrumbs';
import { FileTable } from './file-table';
import { PreviewDialog } from './preview-dialog';
import { ShareDialog } from './share-dialog';

export const PAGE_SIZE = 50;

interface Props {
  bucket: StorageBucket;
  /** The folder shown: `''` for the top of the bucket, else a path ending in `/`. */
  folder: string;
  /** Bumped by the parent after uploads, to refresh the current page. */
  version: number;
  onChanged: () => void;
  onPickFiles: () => void;
}

/**
 * One folder of a bucket: its folders and files (listed with `delimiter=/`),
 * search by prefix within it, paging with the server's cursor, preview,
 * share, delete. The parent remounts it per folder, so search and paging
 * start afresh in each.
 */
export function FileBrowser({ bucket, folder, version, onChanged, onPickFiles }: Props) {
  const [search, setSearch] = useState('');
  const searched = useDebounced(search.trim() === '' ? '' : search, 250);
  // cursors[i] is the cursor that fetches page i; page 0 has none.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState(0);
  const [previewing, setPreviewing] = useState<BucketObject | null>(null);
  const [sharing, setSharing] = useState<BucketObject | null>(null);
  const [deleting, setDeleting] = useState<BucketObject | null>(null);
  const { notify } = useToast();

  useEffect(() => {
    setCursors([null]);
    setPage(0);
  }, [searched]);

  const cursor = cursors[page] ?? null;
  const prefix = folder + searched;
  const files = useAsync((signal) => listFiles(bucket.id, { prefix, delimiter: '/', limit: PAGE_SIZE, cursor }, signal), [bucket.id, prefix, cursor]);
  const { reload } = files;
  // Reload on a new version only: this browser is remounted per folder, and its first load is already running.
  const loadedVersion = useRef(version);
  useEffect(() => {
    if (version === loadedVersion.current) return;
    loadedVersion.current = version;
    reload();
  }, [version, reload]);

  const nextCursor = files.data?.next_cursor ?? null;
  // A folder's own marker is never listed inside it with a delimiter; this only guards against showing one as a file.
  const objects = files.data?.data.filter((object) => !isFolderMarker(object.filename));
  const folders = files.data?.folders ?? [];
  const shownOnPage = (files.data?.data.length ?? 0) + folders.length;
  const searching = searched !== '';

  const goNext = () => {
    if (!nextCursor) return;
    setCursors((list) => [...list.slice(0, page + 1), nextCursor]);
    setPage((p) => p + 1);
  };

  return (
    <section className="card" aria-labelledby="files-title">
      <header className="card-header card-header-wrap">
        <h2 id="files-title" className="sr-only">
          Files
        </h2>
        <Breadcrumbs bucketId={bucket.id} bucketName={bucket.name} folder={folder} />
        <div className="search">
          <Icon name="search" className="search-icon" />
          <label htmlFor="file-search" className="sr-only">
            Search files by name prefix
          </label>
          <input
            id="file-search"
            className="input search-input"
            type="search"
            placeholder={folder ? 'Search in this folder…' : 'Search by prefix…'}
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
      ) : objects && objects.length === 0 && folders.length === 0 ? (
        searching ? (
          <EmptyState icon="search" title="No matching files">
            <p>No file or folder name starts with “{searched}”. Search matches the beginning of names and is case-sensitive.</p>
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
            title={folder ? 'This folder is empty' : 'This bucket is empty'}
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
          <FileTable
            bucketId={bucket.id}
            folder={folder}
            folders={folders}
            objects={objects}
            onPreview={setPreviewing}
            onShare={setSharing}
            onDelete={setDeleting}
          />
          {page > 0 || nextCursor ? (
            <nav className="pager" aria-label="File pages">
              <button type="button" className="btn btn-secondary btn-small" onClick={() => setPage((p) => Math.max(0, p - 1))} disabled={page === 0}>
                <Icon name="chevronLeft" size={16} /> Previous
              </button>
              {/* No "of N": the bucket's object count includes everything in its folders, and a page counts folders too. */}
              <span className="pager-info" aria-live="polite">
                Page {page + 1} · {folders.length > 0 ? 'items' : 'files'} {page * PAGE_SIZE + 1}–{page * PAGE_SIZE + shownOnPage}
              </span>
              <button type="button" className="btn btn-secondary btn-small" onClick={goNext} disabled={!nextCursor}>
                Next <Icon name="chevronRight" size={16} />
              </button>
            </nav>
          ) : null}
        </>
      ) : null}

      <PreviewDialog object={previewing} bucketId={bucket.id} isPublic={bucket.public} onClose={() => setPreviewing(null)} />
      <ShareDialog bucketId={bucket.id} object={sharing} onClose={() => setSharing(null)} />
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
