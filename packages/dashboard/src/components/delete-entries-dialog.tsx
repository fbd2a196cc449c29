/**
 * One confirmation to delete files and folders together. A folder goes with
 * everything in it through `DELETE …/folders/<folder>/`; the dialog counts
 * its files first from the listing, so the question states what will go.
 */
import type { BucketObject } from '@pail/shared';
import { deleteFile } from '../api/buckets';
import { deleteFolder, folderSize, type FolderSize } from '../api/file-ops';
import { useAsync } from '../hooks/use-async';
import { describeEntries, ownName } from '../lib/entries';
import { formatBytes, pluralize } from '../lib/format';
import { ConfirmDialog } from './confirm-dialog';
import { Spinner } from './states';

const NAMES_SHOWN = 5;
// Stable empties: a new [] each render would make the count below reload forever.
const NONE: BucketObject[] = [];
const NO_FOLDERS: string[] = [];

export interface DeleteOutcome {
  /** Files deleted, a folder's each counted. */
  files: number;
  folders: number;
}

interface Props {
  bucketId: number;
  bucketName: string;
  /** Null: closed. */
  selection: { files: BucketObject[]; folders: string[] } | null;
  onClose: () => void;
  onDeleted: (outcome: DeleteOutcome) => void;
}

export function DeleteEntriesDialog({ bucketId, bucketName, selection, onClose, onDeleted }: Props) {
  const files = selection?.files ?? NONE;
  const folders = selection?.folders ?? NO_FOLDERS;
  const sizes = useAsync((signal) => Promise.all(folders.map((folder) => folderSize(bucketId, folder, signal))), [bucketId, folders]);
  const entries = [...folders.map((name) => ({ kind: 'folder' as const, name })), ...files.map((f) => ({ kind: 'file' as const, name: f.filename }))];
  const total = totalOf(files, sizes.data);
  const onlyFiles = folders.length === 0;
  const oneFolder = folders.length === 1 && files.length === 0 ? folders[0] : undefined;

  const title = oneFolder
    ? `Delete folder “${ownName({ kind: 'folder', name: oneFolder })}”?`
    : onlyFiles
      ? `Delete ${pluralize(files.length, 'file')}?`
      : `Delete ${describeEntries(entries)}?`;
  const confirmLabel = oneFolder ? 'Delete folder' : onlyFiles ? `Delete ${pluralize(files.length, 'file')}` : 'Delete all';

  return (
    <ConfirmDialog
      open={selection !== null}
      title={title}
      confirmLabel={confirmLabel}
      confirmDisabled={!onlyFiles && sizes.loading}
      onClose={onClose}
      onConfirm={async () => {
        const outcome: DeleteOutcome = { files: 0, folders: 0 };
        const failures: string[] = [];
        // Folders one at a time (each is already many deletes on the server), then the files together.
        for (const [index, folder] of folders.entries()) {
          try {
            const deleted = await deleteFolder(bucketId, folder);
            // The server's count includes an empty-folder marker; the files counted beforehand do not.
            const counted = sizes.data?.[index];
            outcome.files += counted && !counted.more ? Math.min(counted.files, deleted) : deleted;
            outcome.folders++;
          } catch (error) {
            failures.push(`${folder}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        const results = await Promise.allSettled(files.map((file) => deleteFile(bucketId, file.filename)));
        results.forEach((result, index) => {
          if (result.status === 'fulfilled') outcome.files++;
          else failures.push(`${files[index]?.filename}: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`);
        });
        onDeleted(outcome);
        if (failures.length > 0) throw new Error(`Could not delete ${failures.length === 1 ? failures[0] : failures.join('; ')}`);
      }}
    >
      {selection ? (
        <div className="prose">
          <p>
            This permanently deletes{' '}
            {sizes.loading && !onlyFiles ? (
              <>
                <Spinner size={14} /> (counting the files…)
              </>
            ) : sizes.error ? (
              <>everything in {folders.join(', ')}</>
            ) : (
              <strong>
                {total.more ? 'more than ' : ''}
                {pluralize(total.files, 'file')} ({formatBytes(total.bytes)})
              </strong>
            )}{' '}
            from <strong>{bucketName}</strong>
            {oneFolder ? (
              <>
                : everything in <strong>{oneFolder}</strong>, its subfolders included.
              </>
            ) : (
              ':'
            )}
          </p>
          {oneFolder ? null : (
            <ul className="bulk-names">
              {entries.slice(0, NAMES_SHOWN).map((entry) => (
                <li key={entry.name}>
                  {entry.name}
                  {entry.kind === 'folder' && sizes.data ? ` (${folderFigure(sizes.data[folders.indexOf(entry.name)])})` : null}
                </li>
              ))}
              {entries.length > NAMES_SHOWN ? <li>and {pluralize(entries.length - NAMES_SHOWN, 'more')}</li> : null}
            </ul>
          )}
          <p>{total.files === 1 && onlyFiles ? 'Its URL' : 'Their URLs'} will stop working.</p>
        </div>
      ) : null}
    </ConfirmDialog>
  );
}

function totalOf(files: BucketObject[], folders: FolderSize[] | undefined): FolderSize {
  const total: FolderSize = { files: files.length, bytes: files.reduce((sum, f) => sum + f.size, 0), more: false };
  for (const size of folders ?? []) {
    total.files += size.files;
    total.bytes += size.bytes;
    total.more ||= size.more;
  }
  return total;
}

function folderFigure(size: FolderSize | undefined): string {
  if (!size) return '';
  return `${size.more ? 'more than ' : ''}${pluralize(size.files, 'file')}`;
}

/** "3 files deleted", "Deleted photos/ (100 files)". */
export function deletedMessage(outcome: DeleteOutcome, folders: string[]): string {
  if (outcome.folders === 0) return `${pluralize(outcome.files, 'file')} deleted`;
  if (folders.length === 1 && outcome.folders === 1) return `Deleted ${folders[0]} (${pluralize(outcome.files, 'file')})`;
  return `Deleted ${pluralize(outcome.folders, 'folder')}, ${pluralize(outcome.files, 'file')} in all`;
}
