/**
 * The file browser's operations on files and folders beyond upload, preview
 * and share: rename, move, delete (folders with everything in them), zip
 * downloads and the details panel. One hook holds their dialogs' state and
 * hands the table and the selection bar what to call.
 */
import { useMemo, useState } from 'react';
import type { BucketObject, StorageBucket } from '@pail/shared';
import { fileApiPath } from '../../api/http';
import { DeleteEntriesDialog, deletedMessage } from '../../components/delete-entries-dialog';
import { FileDetailsPanel } from '../../components/file-details';
import { MoveDialog, movedMessage } from '../../components/move-dialog';
import { RenameDialog } from '../../components/rename-dialog';
import { useToast } from '../../hooks/toast';
import { downloadFile, useZipDownload } from '../../hooks/use-zip-download';
import type { Entry } from '../../lib/entries';
import { baseName } from '../../lib/folders';
import { pluralize } from '../../lib/format';
import type { EntryActions } from './entry-menu';

interface Options {
  bucket: StorageBucket;
  /** The folder shown. */
  folder: string;
  onChanged: () => void;
  /** After a bulk action acted on the selection. */
  clearSelection: () => void;
}

export function useFileOperations({ bucket, folder, onChanged, clearSelection }: Options) {
  const { notify } = useToast();
  const zip = useZipDownload(bucket.id);
  const [renaming, setRenaming] = useState<Entry | null>(null);
  const [moving, setMoving] = useState<Entry[] | null>(null);
  const [deleting, setDeleting] = useState<{ files: BucketObject[]; folders: string[] } | null>(null);
  const [details, setDetails] = useState<BucketObject | null>(null);

  const actions: EntryActions = useMemo(
    () => ({
      details: setDetails,
      rename: setRenaming,
      move: (entry) => setMoving([entry]),
      downloadFolder: zip.downloadFolder,
      deleteFolder: (prefix) => setDeleting({ files: [], folders: [prefix] }),
    }),
    [zip.downloadFolder],
  );

  const download = (files: BucketObject[], folders: string[]) => {
    const [only] = files;
    if (folders.length === 0 && files.length === 1 && only) downloadFile(fileApiPath(bucket.id, only.filename), baseName(only.filename));
    else
      zip.downloadSelection(
        folder,
        files.map((f) => f.filename),
        folders,
      );
  };
  const move = (files: BucketObject[], folders: string[]) =>
    setMoving([...folders.map((name): Entry => ({ kind: 'folder', name })), ...files.map((f): Entry => ({ kind: 'file', name: f.filename }))]);
  const remove = (files: BucketObject[], folders: string[]) => setDeleting({ files, folders });

  const dialogs = (
    <>
      <RenameDialog
        bucket={bucket}
        entry={renaming}
        onClose={() => setRenaming(null)}
        onRenamed={(outcome, entry, newName) => {
          notify(entry.kind === 'folder' ? `Renamed to ${newName} (${pluralize(outcome.moved, 'file')} moved)` : `Renamed to ${newName}`);
          onChanged();
        }}
      />
      <MoveDialog
        bucket={bucket}
        entries={moving}
        folder={folder}
        onClose={() => setMoving(null)}
        onMoved={(outcome, destination) => {
          notify(movedMessage(outcome, `${destination.bucket.name}/${destination.folder}`));
          clearSelection();
          onChanged();
        }}
      />
      <DeleteEntriesDialog
        bucketId={bucket.id}
        bucketName={bucket.name}
        selection={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={(outcome) => {
          clearSelection();
          if (outcome.files > 0 || outcome.folders > 0) notify(deletedMessage(outcome, deleting?.folders ?? []));
          onChanged();
        }}
      />
      <FileDetailsPanel bucketId={bucket.id} objectLock={bucket.object_lock} object={details} onClose={() => setDetails(null)} onChanged={onChanged} />
    </>
  );

  return { actions, download, move, remove, dialogs };
}
