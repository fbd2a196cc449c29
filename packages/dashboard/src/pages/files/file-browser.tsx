import { useEffect, useMemo, useRef, useState } from 'react';
import { isFolderMarker } from '@pail/shared/names';
import type { BucketObject, StorageBucket } from '@pail/shared';
import { deleteFile, listFiles } from '../../api/buckets';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Icon } from '../../components/icons';
import { EmptyState, ErrorState, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useBrowseView } from '../../hooks/use-browse-view';
import { useSelection } from '../../hooks/use-selection';
import { useToast } from '../../hooks/toast';
import { queryOf, type BrowseView } from '../../lib/browse-view';
import { formatBytes } from '../../lib/format';
import { Breadcrumbs } from './breadcrumbs';
import { BulkBar } from './bulk-actions';
import { useFileOperations } from './file-operations';
import { FileSearch } from './file-search';
import { FileTable } from './file-table';
import { Pager } from './pager';
import { PreviewDialog } from './preview-dialog';
import { ShareDialog } from './share-dialog';
import { SortSelect } from './sort-select';

export const PAGE_SIZE = 50;

interface Props {
  bucket: StorageBucket;
  /** Bumped by the parent after uploads, to refresh the current page. */
  version: number;
  onChanged: () => void;
  onPickFiles: () => void;
}

/**
 * One folder of a bucket: its folders and files (listed with `delimiter=/`),
 * searched and sorted on the server, paged with its cursor; the whole view is
 * in the URL (lib/browse-view.ts). Files can be selected, a page at a time,
 * to download or delete together.
 */
export function FileBrowser({ bucket, version, onChanged, onPickFiles }: Props) {
  const [view, setView] = useBrowseView();
  const { folder, search, sort, order, cursor, page } = view;
  const [previewing, setPreviewing] = useState<BucketObject | null>(null);
  const [sharing, setSharing] = useState<BucketObject | null>(null);
  const [deleting, setDeleting] = useState<BucketObject | null>(null);
  const { notify } = useToast();
  const pageCursors = usePageCursors(view);

  const files = useAsync(
    (signal) => listFiles(bucket.id, { prefix: folder, delimiter: '/', limit: PAGE_SIZE, cursor, search, sort, order }, signal),
    [bucket.id, folder, cursor, search, sort, order],
  );
  const { reload } = files;
  // Reload on a new version only: the first load for this view is already running.
  const loadedVersion = useRef(version);
  useEffect(() => {
    if (version === loadedVersion.current) return;
    loadedVersion.current = version;
    reload();
  }, [version, reload]);

  const nextCursor = files.data?.next_cursor ?? null;
  // A folder's own marker is never listed inside it with a delimiter; this only guards against showing one as a file.
  const objects = useMemo(() => files.data?.data.filter((object) => !isFolderMarker(object.filename)), [files.data]);
  const folders = files.data?.folders ?? [];
  // Folders are selected by their prefix (ending in `/`), which no file's name is.
  const names = useMemo(() => [...(files.data?.folders ?? []), ...(objects?.map((object) => object.filename) ?? [])], [files.data, objects]);
  const selection = useSelection(names);
  const selectedFiles = objects?.filter((object) => selection.selected.has(object.filename)) ?? [];
  const selectedFolders = folders.filter((prefix) => selection.selected.has(prefix));
  const operations = useFileOperations({ bucket, folder, onChanged, clearSelection: selection.clear });
  const shownOnPage = (files.data?.data.length ?? 0) + folders.length;
  const searching = search !== '';
  const firstPage = () => setView({ cursor: null, page: 1 });

  const goNext = () => {
    if (!nextCursor) return;
    pageCursors.remember(page, cursor);
    setView({ cursor: nextCursor, page: page + 1 });
  };
  const goPrevious = () => {
    const previous = pageCursors.of(page - 1);
    // A reload forgets earlier pages' cursors: without one, the way back is the first page.
    if (previous === undefined) firstPage();
    else setView({ cursor: previous, page: page - 1 });
  };

  return (
    <section className="card" aria-labelledby="files-title">
      <header className="card-header card-header-wrap">
        <h2 id="files-title" className="sr-only">
          Files
        </h2>
        <Breadcrumbs bucketId={bucket.id} bucketName={bucket.name} folder={folder} />
        <FileSearch
          value={search}
          inFolder={folder !== ''}
          busy={files.refreshing && objects !== undefined}
          onSearch={(text) => setView({ search: text }, { replace: true })}
        />
        <SortSelect sort={sort} order={order} onSort={(column, direction) => setView({ sort: column, order: direction })} />
      </header>

      <BulkBar
        files={selectedFiles}
        folders={selectedFolders}
        onDownload={() => operations.download(selectedFiles, selectedFolders)}
        onMove={() => operations.move(selectedFiles, selectedFolders)}
        onDelete={() => operations.remove(selectedFiles, selectedFolders)}
        onClear={selection.clear}
      />

      {files.loading ? (
        <Loading label={searching ? 'Searching…' : 'Loading files…'} />
      ) : files.error ? (
        <ErrorState title="Could not load the files" error={files.error} onRetry={files.reload} />
      ) : objects && objects.length === 0 && folders.length === 0 ? (
        searching ? (
          <EmptyState icon="search" title="No matching files">
            <p>
              No file {folder ? 'in this folder or the folders in it' : 'in this bucket'} has “{search}” in its name. Search ignores upper and lower case.
            </p>
          </EmptyState>
        ) : page > 1 ? (
          <EmptyState
            icon="file"
            title="This page is empty"
            action={
              <button type="button" className="btn btn-secondary" onClick={firstPage}>
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
            sort={sort}
            order={order}
            onSort={(column, direction) => setView({ sort: column, order: direction })}
            selection={selection}
            folderHref={(prefix) => `/buckets/${bucket.id}${queryOf({ folder: prefix, sort, order })}`}
            onPreview={setPreviewing}
            onShare={setSharing}
            onDelete={setDeleting}
            actions={operations.actions}
          />
          {page > 1 || nextCursor ? (
            <Pager
              page={page}
              first={(page - 1) * PAGE_SIZE + 1}
              last={(page - 1) * PAGE_SIZE + shownOnPage}
              unit={folders.length > 0 ? 'items' : 'files'}
              onPrevious={goPrevious}
              onNext={nextCursor ? goNext : null}
            />
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
      {operations.dialogs}
    </section>
  );
}

/**
 * The cursors of the pages visited in this list, for "Previous": the URL
 * holds only the current page's. A new search, sort or folder starts afresh.
 */
function usePageCursors(view: BrowseView) {
  const list = `${view.folder}\n${view.search}\n${view.sort}\n${view.order}`;
  const cursors = useRef({ list, byPage: new Map<number, string | null>([[1, null]]) });
  if (cursors.current.list !== list) cursors.current = { list, byPage: new Map([[1, null]]) };
  const { byPage } = cursors.current;
  return {
    remember: (page: number, cursor: string | null) => byPage.set(page, cursor),
    of: (page: number) => byPage.get(page),
  };
}
