import { useCallback, useEffect, useRef, useState } from 'react';
import { getBucket } from '../../api/buckets';
import { ApiError } from '../../api/http';
import { Icon } from '../../components/icons';
import { PageHeader } from '../../components/layout';
import { Link } from '../../components/link';
import { ErrorState, Loading } from '../../components/states';
import { VisibilityBadge } from '../../components/visibility-badge';
import { useAsync } from '../../hooks/use-async';
import { useBrowseView } from '../../hooks/use-browse-view';
import { useSession } from '../../hooks/session';
import { useToast } from '../../hooks/toast';
import { useUploadQueue, useUploadsInto } from '../../hooks/upload-queue';
import { formatBytes, formatDate, pluralize } from '../../lib/format';
import { folderName } from '../../lib/folders';
import { navigate } from '../../lib/router';
import { noncurrentBytesOf, versioningOf } from '../../lib/trash';
import { BucketSettingsDialog } from '../buckets/bucket-settings-dialog';
import { DeleteBucketDialog } from '../buckets/delete-bucket-dialog';
import { VisibilitySwitch } from '../buckets/visibility-switch';
import type { PickedFile } from '../../lib/dropped-files';
import { DropZone, HiddenFileInput } from './drop-zone';
import { FileBrowser } from './file-browser';
import { NewFolderDialog } from './new-folder-dialog';

export function BucketPage({ bucketId }: { bucketId: number }) {
  const bucket = useAsync((signal) => getBucket(bucketId, signal), [bucketId]);
  const { refreshUser } = useSession();
  const { notify } = useToast();
  const [version, setVersion] = useState(0);
  const [deleting, setDeleting] = useState(false);
  const [makingFolder, setMakingFolder] = useState(false);
  const [editingSettings, setEditingSettings] = useState(false);
  const [{ folder }, setView] = useBrowseView();
  const picker = useRef<HTMLInputElement>(null);
  const folderPicker = useRef<HTMLInputElement>(null);

  const { reload: reloadBucket } = bucket;
  const changed = useCallback(() => {
    setVersion((v) => v + 1);
    reloadBucket();
    void refreshUser();
  }, [reloadBucket, refreshUser]);

  // A batch of uploads finishing one after another refreshes the lists once, not once per file.
  const refreshTimer = useRef<number | null>(null);
  const changedSoon = useCallback(() => {
    if (refreshTimer.current !== null) return;
    refreshTimer.current = window.setTimeout(() => {
      refreshTimer.current = null;
      changed();
    }, 250);
  }, [changed]);
  useEffect(
    () => () => {
      if (refreshTimer.current !== null) window.clearTimeout(refreshTimer.current);
    },
    [],
  );

  // The queue is app-wide (hooks/upload-queue.tsx): uploads go on on other pages; this page only hears when one lands here.
  useUploadsInto(bucketId, changedSoon);
  const { addFiles } = useUploadQueue();
  const current = bucket.data;
  // Files go into the folder on screen when they are picked or dropped, wherever the user goes next.
  const addToFolder = useCallback((files: PickedFile[]) => void (current && addFiles(current, files, folder)), [addFiles, current, folder]);

  useEffect(() => {
    document.title = `${bucket.data?.name ?? 'Bucket'} · Pail`;
  }, [bucket.data?.name]);

  const openPicker = () => picker.current?.click();

  if (bucket.loading && !bucket.data) return <Loading label="Loading bucket…" />;
  if (bucket.error && !bucket.data) {
    const notFound = bucket.error instanceof ApiError && bucket.error.status === 404;
    return (
      <div className="page">
        <BackLink />
        <ErrorState
          title={notFound ? 'Bucket not found' : 'Could not load this bucket'}
          error={notFound ? new Error('It may have been deleted, or the link is wrong.') : bucket.error}
          onRetry={notFound ? undefined : bucket.reload}
        />
      </div>
    );
  }
  const b = bucket.data;
  if (!b) return null;

  return (
    <div className="page">
      <BackLink />
      <PageHeader
        title={
          <>
            <span className="title-text">{b.name}</span> <VisibilityBadge isPublic={b.public} />
          </>
        }
        description={
          <span className="stats" aria-label="Bucket summary">
            <span data-testid="bucket-object-count">{pluralize(b.object_count, 'object')}</span>
            <span aria-hidden="true">·</span>
            <span data-testid="bucket-size">{formatBytes(b.total_bytes)}</span>
            {versioningOf(b) === 'unversioned' ? null : (
              <>
                <span aria-hidden="true">·</span>
                <span data-testid="bucket-noncurrent-bytes">{formatBytes(noncurrentBytesOf(b))} in old versions</span>
              </>
            )}
            <span aria-hidden="true">·</span>
            <span>Created {formatDate(b.created_at)}</span>
          </span>
        }
        actions={
          <>
            {/* The badge beside the name says what the bucket is; the switch, what it controls. */}
            <VisibilitySwitch bucket={b} text="Public access" onChanged={(next) => bucket.setData(() => next)} />
            {/* The bucket's own pages and settings as icons, named for screen readers and on hover, so the actions keep one row. */}
            <button type="button" className="btn btn-secondary btn-icon" aria-label="Settings" title="Settings" onClick={() => setEditingSettings(true)}>
              <Icon name="settings" />
            </button>
            <Link to={`/buckets/${b.id}/trash`} className="btn btn-secondary btn-icon" aria-label="Trash" title="Trash">
              <Icon name="archive" />
            </Link>
            <Link className="btn btn-secondary btn-icon" to={`/buckets/${b.id}/webhooks`} aria-label="Webhooks" title="Webhooks">
              <Icon name="link" />
            </Link>
            <button type="button" className="btn btn-secondary btn-danger-text" onClick={() => setDeleting(true)}>
              <Icon name="trash" /> Delete bucket
            </button>
            <button type="button" className="btn btn-secondary" onClick={() => setMakingFolder(true)}>
              <Icon name="folderPlus" /> New folder
            </button>
            <button type="button" className="btn btn-secondary" onClick={() => folderPicker.current?.click()}>
              <Icon name="folder" /> Upload folder
            </button>
            <button type="button" className="btn btn-primary" onClick={openPicker}>
              <Icon name="upload" /> Upload files
            </button>
          </>
        }
      />
      <HiddenFileInput ref={picker} onFiles={addToFolder} />
      <HiddenFileInput ref={folderPicker} onFiles={addToFolder} folder />

      <DropZone onFiles={addToFolder} target={folder ? `${b.name}/${folder}` : b.name}>
        <div className="stack">
          <FileBrowser key={folder} bucket={b} version={version} onChanged={changed} onPickFiles={openPicker} />
          <p className="drop-hint">
            <Icon name="upload" size={16} /> Tip: drop files or folders anywhere on this area to upload them.
          </p>
        </div>
      </DropZone>

      <NewFolderDialog
        open={makingFolder}
        bucketId={bucketId}
        parent={folder}
        onClose={() => setMakingFolder(false)}
        onCreated={(made) => {
          setMakingFolder(false);
          notify(`Folder ${folderName(made, folder)} created`);
          changed();
          // Into the new folder, as a file manager does: the next upload lands in it.
          setView({ folder: made, search: '' });
        }}
      />

      <BucketSettingsDialog
        bucket={editingSettings ? b : null}
        onClose={() => setEditingSettings(false)}
        onSaved={(next) => {
          bucket.setData(() => next);
          notify(`Settings of ${next.name} saved`);
        }}
      />

      <DeleteBucketDialog
        bucket={deleting ? b : null}
        onClose={() => setDeleting(false)}
        onDeleted={(gone) => {
          notify(`Bucket ${gone.name} deleted`);
          void refreshUser();
          navigate('/buckets', { replace: true });
        }}
      />
    </div>
  );
}

function BackLink() {
  return (
    <Link to="/buckets" className="back-link">
      <Icon name="chevronLeft" size={16} /> All buckets
    </Link>
  );
}
