/**
 * Large uploads this browser started and did not finish (a reload, a closed
 * tab): tus remembers them in localStorage. The tray lists them, so the user
 * knows to pick the same file again (it goes on from the server's offset), or
 * discards them (the server gives back what they held of the cap).
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { getBucket } from '../api/buckets';
import { discardUnfinishedUpload, findUnfinishedUploads, type UnfinishedUpload } from '../api/resumable';
import type { UploadItem } from './upload-queue';
import { useToast } from './toast';

type AddFiles = (bucket: StorageBucket, files: File[], folder: string) => Promise<void>;

export function useUnfinishedUploads(items: UploadItem[], addFiles: AddFiles) {
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
        await addFiles(await getBucket(upload.bucketId), [file], upload.filename.slice(0, slash + 1));
      } catch (err) {
        notify(err instanceof Error ? err.message : String(err), 'error');
      }
    },
    [addFiles, notify],
  );

  const discardUnfinished = useCallback((upload: UnfinishedUpload) => {
    setStored((list) => list.filter((u) => u.key !== upload.key));
    void discardUnfinishedUpload(upload);
  }, []);

  return { unfinished, continueUnfinished, discardUnfinished };
}
