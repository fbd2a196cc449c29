/**
 * Large uploads that did not finish (a reload, a closed tab, another browser
 * or tool): tus remembers this browser's in localStorage, and the server lists
 * every one of the user's (api/unfinished.ts). The tray lists this browser's,
 * the Usage page the server's; the same file picked again goes on from the
 * server's offset, and cancelling one frees what it held of the cap.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { getBucket } from '../api/buckets';
import { discardUnfinishedUpload, findUnfinishedUploads, forgetUploadUrl, type UnfinishedUpload } from '../api/resumable';
import { cancelUnfinishedUpload, resumableUploadUrl, type ServerUnfinishedUpload } from '../api/unfinished';
import type { UploadItem } from './upload-queue';
import { useToast } from './toast';

/** Queues files; `resume` names the upload the single file goes on with and what it already holds of the cap. */
type AddFiles = (bucket: StorageBucket, files: File[], folder: string, resume?: { url: string; heldBytes: number }) => Promise<void>;

export function useUnfinishedUploads(items: UploadItem[], addFiles: AddFiles, onCancelled: () => void) {
  const { notify } = useToast();
  const [stored, setStored] = useState<UnfinishedUpload[]>([]);

  useEffect(() => {
    let live = true;
    void findUnfinishedUploads().then((found) => live && setStored(found));
    return () => {
      live = false;
    };
  }, []);

  // Once queued again (from here or from the bucket's page), an unfinished upload is the queue's.
  const unfinished = useMemo(() => stored.filter((u) => !items.some((i) => i.bucketId === u.bucketId && i.name === u.filename)), [stored, items]);

  const continueUnfinished = useCallback(
    async (upload: UnfinishedUpload, file: File) => {
      const slash = upload.filename.lastIndexOf('/');
      if (file.name !== upload.filename.slice(slash + 1) || file.size !== upload.size) {
        notify(`That is not the file that was being uploaded: pick ${upload.filename.slice(slash + 1)} (${upload.size} bytes).`, 'error');
        return;
      }
      try {
        await addFiles(await getBucket(upload.bucketId), [file], upload.filename.slice(0, slash + 1), { url: upload.url, heldBytes: upload.size });
      } catch (err) {
        notify(err instanceof Error ? err.message : String(err), 'error');
      }
    },
    [addFiles, notify],
  );

  const discardUnfinished = useCallback(
    (upload: UnfinishedUpload) => {
      setStored((list) => list.filter((u) => u.key !== upload.key));
      void discardUnfinishedUpload(upload).then(onCancelled);
    },
    [onCancelled],
  );

  /** Cancels one of the server's list; this browser forgets it too, when it was this browser's. */
  const cancelUnfinished = useCallback(
    async (upload: ServerUnfinishedUpload) => {
      await cancelUnfinishedUpload(upload.kind, upload.id);
      if (upload.kind === 'resumable') {
        const url = resumableUploadUrl(upload);
        setStored((list) => list.filter((u) => u.url !== url));
        await forgetUploadUrl(url);
      }
      onCancelled();
    },
    [onCancelled],
  );

  return { unfinished, continueUnfinished, discardUnfinished, cancelUnfinished };
}
