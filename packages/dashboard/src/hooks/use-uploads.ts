/**
 * The upload queue of one bucket: a few files at a time, each with progress,
 * speed, cancel and retry. Uploads still running when the page goes away are
 * aborted, so nothing keeps sending in the background unseen.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { UploadResult } from '@pail/shared';
import { filenameProblem } from '@pail/shared/names';
import { ApiError } from '../api/http';
import { UploadCancelled, uploadFile, type UploadHandle } from '../api/upload';

const MAX_PARALLEL = 3;

export type UploadStatus = 'queued' | 'uploading' | 'processing' | 'done' | 'error' | 'cancelled';

export interface UploadItem {
  id: string;
  /** The whole name it is stored under: the folder it was added in, then the file's own name. */
  name: string;
  size: number;
  status: UploadStatus;
  loaded: number;
  /** Bytes per second, smoothed. */
  speed: number;
  error?: string;
  /** What stopped it, for a tailored hint: the storage cap, the file-size cap, or other. */
  errorKind?: 'storage-cap' | 'file-cap' | 'other';
  result?: UploadResult;
}

interface Sample {
  time: number;
  loaded: number;
  speed: number;
}

let counter = 0;

function errorKind(err: unknown): UploadItem['errorKind'] {
  if (!(err instanceof ApiError)) return 'other';
  if (err.code === 'StorageLimitExceeded' || (err.status === 409 && /storage/i.test(err.message))) return 'storage-cap';
  if (err.code === 'PayloadTooLarge' || err.status === 413) return 'file-cap';
  return 'other';
}

export function useUploads(bucketId: number, onUploaded: (result: UploadResult) => void) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const files = useRef(new Map<string, File>());
  const handles = useRef(new Map<string, UploadHandle>());
  const samples = useRef(new Map<string, Sample>());
  const onUploadedRef = useRef(onUploaded);
  onUploadedRef.current = onUploaded;

  const update = useCallback((id: string, patch: Partial<UploadItem>) => {
    setItems((list) => list.map((item) => (item.id === id ? { ...item, ...patch } : item)));
  }, []);

  const start = useCallback(
    (item: UploadItem) => {
      const file = files.current.get(item.id);
      if (!file || handles.current.has(item.id)) return;
      samples.current.set(item.id, { time: performance.now(), loaded: 0, speed: 0 });

      const handle = uploadFile(bucketId, item.name, file, (loaded, total) => {
        const now = performance.now();
        const previous = samples.current.get(item.id);
        let speed = previous?.speed ?? 0;
        if (previous && now - previous.time >= 200) {
          const instant = ((loaded - previous.loaded) * 1000) / (now - previous.time);
          speed = previous.speed > 0 ? previous.speed * 0.6 + instant * 0.4 : instant;
          samples.current.set(item.id, { time: now, loaded, speed });
        } else if (!previous) {
          samples.current.set(item.id, { time: now, loaded, speed });
        }
        // Every byte sent, but no answer yet: the server is still storing it.
        const status: UploadStatus = total > 0 && loaded >= total ? 'processing' : 'uploading';
        update(item.id, { loaded, speed, status });
      });
      handles.current.set(item.id, handle);
      update(item.id, { status: 'uploading', loaded: 0, speed: 0, error: undefined, errorKind: undefined });

      handle.promise.then(
        (result) => {
          handles.current.delete(item.id);
          update(item.id, { status: 'done', loaded: file.size, result });
          onUploadedRef.current(result);
        },
        (err: unknown) => {
          handles.current.delete(item.id);
          if (err instanceof UploadCancelled) {
            update(item.id, { status: 'cancelled' });
            return;
          }
          update(item.id, {
            status: 'error',
            error: err instanceof Error ? err.message : String(err),
            errorKind: errorKind(err),
          });
        },
      );
    },
    [bucketId, update],
  );

  // Start queued files while fewer than MAX_PARALLEL are running.
  useEffect(() => {
    const running = items.filter((i) => i.status === 'uploading' || i.status === 'processing').length;
    const queued = items.filter((i) => i.status === 'queued' && !handles.current.has(i.id));
    queued.slice(0, Math.max(0, MAX_PARALLEL - running)).forEach(start);
  }, [items, start]);

  // Leaving the bucket cancels what is still running.
  useEffect(() => {
    const current = handles.current;
    return () => {
      for (const handle of current.values()) handle.abort();
      current.clear();
    };
  }, [bucketId]);

  /** Queues files for `folder` (`''` for the top of the bucket, else a path ending in `/`). */
  const addFiles = useCallback((list: FileList | File[], folder = '') => {
    const added: UploadItem[] = [];
    for (const file of Array.from(list)) {
      const id = `u${++counter}`;
      const name = folder + file.name;
      const problem = filenameProblem(name);
      files.current.set(id, file);
      added.push({
        id,
        name,
        size: file.size,
        loaded: 0,
        speed: 0,
        status: problem ? 'error' : 'queued',
        error: problem ?? undefined,
        errorKind: problem ? 'other' : undefined,
      });
    }
    setItems((current) => [...current, ...added]);
  }, []);

  const cancel = useCallback(
    (id: string) => {
      const handle = handles.current.get(id);
      if (handle) handle.abort();
      else update(id, { status: 'cancelled' });
    },
    [update],
  );

  const retry = useCallback((id: string) => {
    setItems((list) =>
      list.map((item) =>
        item.id === id && filenameProblem(item.name) === null
          ? { ...item, status: 'queued', loaded: 0, speed: 0, error: undefined, errorKind: undefined }
          : item,
      ),
    );
  }, []);

  const clearFinished = useCallback(() => {
    setItems((list) => {
      const keep = list.filter((i) => i.status === 'queued' || i.status === 'uploading' || i.status === 'processing');
      for (const item of list) if (!keep.includes(item)) files.current.delete(item.id);
      return keep;
    });
  }, []);

  const active = items.some((i) => i.status === 'queued' || i.status === 'uploading' || i.status === 'processing');

  // Closing the tab mid-upload would lose the upload: ask first.
  useEffect(() => {
    if (!active) return;
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault();
    };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [active]);

  return { items, addFiles, cancel, retry, clearFinished, active };
}
