/**
 * The app-wide upload queue: it lives above the pages, so an upload goes on
 * while the user moves between Buckets, Usage, SDK and other buckets, and the
 * tab asks before closing while uploads run. A few files at a time; large
 * ones over tus (api/resumable.ts: pause, resume, survive a reload or a
 * dropped connection), small ones in one PUT (api/upload.ts). Files refused
 * before sending (plan-uploads.ts) show why, and nothing offers a retry that
 * cannot succeed.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { StorageBucket, UploadResult } from '@pail/shared';
import { me } from '../api/auth';
import { listFiles } from '../api/buckets';
import { ApiError } from '../api/http';
import { RESUMABLE_THRESHOLD, uploadResumable, type ResumableHandle, type UnfinishedUpload } from '../api/resumable';
import type { ServerUnfinishedUpload } from '../api/unfinished';
import { UploadCancelled, uploadFile, type UploadHandle } from '../api/upload';
import { ReplacePrompt, type Clash, type ReplaceChoice } from '../components/replace-prompt';
import type { PickedFile } from '../lib/dropped-files';
import { planUploads } from '../lib/plan-uploads';
import type { Refusal } from '../lib/upload-checks';
import { useSession } from './session';
import { useUnfinishedUploads } from './use-unfinished-uploads';

const MAX_PARALLEL = 3;

export type UploadStatus = 'queued' | 'uploading' | 'paused' | 'processing' | 'done' | 'error' | 'cancelled';

export interface UploadItem {
  id: string;
  bucketId: number;
  bucketName: string;
  /** The whole name it is stored under: the folder it was added in, then the file's own name. */
  name: string;
  size: number;
  status: UploadStatus;
  loaded: number;
  /** Bytes per second, smoothed. */
  speed: number;
  /** The connection failed; tus is trying again from the server's offset. Cleared by the next progress. */
  reconnecting?: boolean | undefined;
  /** Sent over tus: it can be paused, and goes on after a reload. */
  resumable: boolean;
  /** False for refusals a retry would only repeat (the cap, the bucket's limits, a bad name). */
  retryable: boolean;
  error?: string | undefined;
  /** What stopped it, for a tailored hint. */
  errorKind?: Refusal['kind'] | 'other' | undefined;
  result?: UploadResult | undefined;
  /** The unfinished upload it goes on with (chosen again from the server's list). */
  resumeUrl?: string | undefined;
}

export const isRunning = (item: UploadItem) => item.status === 'queued' || item.status === 'uploading' || item.status === 'processing';
export const isFinished = (item: UploadItem) => item.status === 'done' || item.status === 'error' || item.status === 'cancelled';

type FinishedListener = (bucketId: number, result: UploadResult) => void;

interface UploadQueueValue {
  items: UploadItem[];
  /**
   * Checks, asks about names already taken, then queues `files` for `folder` (`''` or a path ending in `/`) of `bucket`:
   * a File under its own name, a PickedFile under its path (a folder's tree).
   */
  addFiles: (bucket: StorageBucket, files: (File | PickedFile)[], folder: string, resume?: { url: string; heldBytes: number }) => Promise<void>;
  cancel: (id: string) => void;
  retry: (id: string) => void;
  pause: (id: string) => void;
  resume: (id: string) => void;
  clearFinished: () => void;
  /** Large uploads a reload or a closed tab stopped, which the same file picked again continues. */
  unfinished: UnfinishedUpload[];
  continueUnfinished: (upload: UnfinishedUpload, file: File) => Promise<void>;
  discardUnfinished: (upload: UnfinishedUpload) => void;
  /** Cancels one of the server's unfinished uploads (api/unfinished.ts); the storage meter follows. */
  cancelUnfinished: (upload: ServerUnfinishedUpload) => Promise<void>;
  /** Called whenever a file lands; returns the unsubscribe. */
  onFinished: (listener: FinishedListener) => () => void;
}

const UploadQueueContext = createContext<UploadQueueValue | null>(null);

let counter = 0;

function errorKind(err: unknown): UploadItem['errorKind'] {
  if (!(err instanceof ApiError)) return 'other';
  if (err.code === 'StorageLimitExceeded' || (err.status === 409 && /storage/i.test(err.message))) return 'storage-cap';
  if (err.code === 'PayloadTooLarge' || err.status === 413) return 'file-cap';
  if (err.code === 'UnsupportedMediaType' || err.status === 415) return 'type';
  return 'other';
}

/** A 4xx is the server saying no to this file: sending it again gets the same answer (a timeout or a rate limit aside). */
function retryable(err: unknown): boolean {
  if (!(err instanceof ApiError)) return true;
  return !(err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429);
}

interface Sample {
  time: number;
  loaded: number;
  speed: number;
}

function smoothed(previous: Sample | undefined, loaded: number, now: number): Sample | null {
  if (!previous) return { time: now, loaded, speed: 0 };
  if (now - previous.time < 200) return null;
  const instant = ((loaded - previous.loaded) * 1000) / (now - previous.time);
  return { time: now, loaded, speed: previous.speed > 0 ? previous.speed * 0.6 + instant * 0.4 : instant };
}

/**
 * The names, with sizes, of the files already where `picked` go: those
 * directly in `folder`, and everything under each folder the pick brings
 * (all of it, page after page). Unknown (the listing failed): none, and
 * the server still refuses nothing it should not.
 */
async function existingNames(bucketId: number, folder: string, picked: PickedFile[]): Promise<Map<string, number>> {
  const existing = new Map<string, number>();
  const prefixes = new Set(picked.flatMap(({ path }) => (path.includes('/') ? [`${folder}${path.slice(0, path.indexOf('/') + 1)}`] : [])));
  const lists: { prefix: string; delimiter?: '/' }[] = [
    ...(picked.some(({ path }) => !path.includes('/')) ? [{ prefix: folder, delimiter: '/' as const }] : []),
    ...[...prefixes].map((prefix) => ({ prefix })),
  ];
  try {
    for (const params of lists) {
      let cursor: string | null = null;
      do {
        const page = await listFiles(bucketId, { ...params, limit: 1000, cursor });
        for (const f of page.data) existing.set(f.filename, f.size);
        // One folder's direct files fill one page in practice; a tree is read to its end.
        cursor = params.delimiter ? null : page.next_cursor;
      } while (cursor);
    }
  } catch {
    return existing;
  }
  return existing;
}

export function UploadQueueProvider({ children }: { children: ReactNode }) {
  const { user, refreshUser } = useSession();
  const [items, setItems] = useState<UploadItem[]>([]);
  const itemsRef = useRef(items);
  itemsRef.current = items;
  const files = useRef(new Map<string, File>());
  const handles = useRef(new Map<string, UploadHandle | ResumableHandle>());
  const samples = useRef(new Map<string, Sample>());
  const listeners = useRef(new Set<FinishedListener>());
  const [clash, setClash] = useState<(Clash & { answer: (choice: ReplaceChoice, forAll: boolean) => void }) | null>(null);

  const update = useCallback((id: string, patch: Partial<UploadItem>) => {
    setItems((list) => list.map((item) => (item.id === id ? { ...item, ...patch } : item)));
  }, []);

  const start = useCallback(
    (item: UploadItem) => {
      const file = files.current.get(item.id);
      if (!file || handles.current.has(item.id)) return;
      samples.current.delete(item.id);
      const onProgress = (loaded: number, total: number) => {
        const sample = smoothed(samples.current.get(item.id), loaded, performance.now());
        if (sample) samples.current.set(item.id, sample);
        // Every byte sent, but no answer yet: the server is still storing it.
        const status: UploadStatus = total > 0 && loaded >= total ? 'processing' : 'uploading';
        setItems((list) =>
          list.map((i) => (i.id === item.id && i.status !== 'paused' ? { ...i, loaded, status, reconnecting: false, speed: sample?.speed ?? i.speed } : i)),
        );
      };
      const onReconnecting = () => update(item.id, { reconnecting: true, speed: 0 });
      const handle = item.resumable
        ? uploadResumable(item.bucketId, item.name, file, onProgress, onReconnecting, item.resumeUrl)
        : uploadFile(item.bucketId, item.name, file, onProgress);
      handles.current.set(item.id, handle);
      update(item.id, { status: 'uploading', speed: 0, error: undefined, errorKind: undefined });

      handle.promise.then(
        (result) => {
          handles.current.delete(item.id);
          update(item.id, { status: 'done', loaded: file.size, result });
          for (const listener of listeners.current) listener(item.bucketId, result);
        },
        (err: unknown) => {
          handles.current.delete(item.id);
          if (err instanceof UploadCancelled) return update(item.id, { status: 'cancelled', retryable: true });
          update(item.id, { status: 'error', error: err instanceof Error ? err.message : String(err), errorKind: errorKind(err), retryable: retryable(err) });
        },
      );
    },
    [update],
  );

  // Start queued files while fewer than MAX_PARALLEL are running (paused ones leave their place to others).
  useEffect(() => {
    const running = items.filter((i) => i.status === 'uploading' || i.status === 'processing').length;
    const queued = items.filter((i) => i.status === 'queued' && !handles.current.has(i.id));
    queued.slice(0, Math.max(0, MAX_PARALLEL - running)).forEach(start);
  }, [items, start]);

  // The storage meter on every page follows the uploads, a batch refreshing it once.
  const doneCount = items.filter((i) => i.status === 'done').length;
  useEffect(() => {
    if (doneCount === 0) return;
    const timer = window.setTimeout(() => void refreshUser(), 300);
    return () => window.clearTimeout(timer);
  }, [doneCount, refreshUser]);

  // A resumable upload holds its length from its creation: once its bytes flow (it was created), the meter shows it held.
  const startedResumable = items.filter((i) => i.resumable && i.loaded > 0).length;
  useEffect(() => {
    if (startedResumable === 0) return;
    const timer = window.setTimeout(() => void refreshUser(), 1000);
    return () => window.clearTimeout(timer);
  }, [startedResumable, refreshUser]);

  // Signing out ends the queue: nothing keeps sending unseen. Paused tus uploads stay resumable.
  useEffect(() => {
    const current = handles.current;
    return () => {
      for (const handle of current.values()) {
        if ('pause' in handle) handle.pause();
        else handle.abort();
      }
      current.clear();
    };
  }, []);

  const ask = useCallback(
    (bucketName: string) => (name: string, more: number) =>
      new Promise<{ choice: ReplaceChoice; forAll: boolean }>((resolve) => {
        setClash({
          name,
          bucketName,
          more,
          answer: (choice, forAll) => {
            setClash(null);
            resolve({ choice, forAll });
          },
        });
      }),
    [],
  );

  const addFiles = useCallback(
    async (bucket: StorageBucket, list: (File | PickedFile)[], folder: string, resume?: { url: string; heldBytes: number }) => {
      if (list.length === 0) return;
      const picked = list.map((item) => (item instanceof File ? { file: item, path: item.name } : item));
      // The files these may replace as the server has them now, and the space left: a stale page must not decide.
      const [existing, account] = await Promise.all([existingNames(bucket.id, folder, picked), me().catch(() => user)]);
      const pending = itemsRef.current.filter((i) => i.bucketId === bucket.id && (isRunning(i) || i.status === 'paused'));
      const pendingBytes = itemsRef.current.filter((i) => isRunning(i) || i.status === 'paused').reduce((sum, i) => sum + i.size, 0);
      // Unfinished uploads hold their bytes too, but the one this file goes on with already holds its own.
      const held = (account?.storage_held_bytes ?? 0) - (resume?.heldBytes ?? 0);
      const spaceLeft = account ? account.storage_limit_bytes - account.storage_used_bytes - Math.max(0, held) - pendingBytes : Infinity;
      const planned = await planUploads({
        bucket,
        files: picked,
        folder,
        existing,
        queued: new Set(pending.map((i) => i.name)),
        spaceLeft,
        ask: ask(bucket.name),
      });
      const added = planned.map(({ file, name, refusal }): UploadItem => {
        const id = `u${++counter}`;
        files.current.set(id, file);
        return {
          id,
          bucketId: bucket.id,
          bucketName: bucket.name,
          name,
          size: file.size,
          loaded: 0,
          speed: 0,
          resumable: file.size >= RESUMABLE_THRESHOLD,
          status: refusal ? 'error' : 'queued',
          retryable: refusal === null,
          error: refusal?.message,
          errorKind: refusal?.kind,
          resumeUrl: resume?.url,
        };
      });
      setItems((current) => [...current, ...added]);
    },
    [ask, user],
  );

  const cancel = useCallback(
    (id: string) => {
      const handle = handles.current.get(id);
      if (handle) handle.abort();
      else update(id, { status: 'cancelled', retryable: true });
    },
    [update],
  );

  const pause = useCallback(
    (id: string) => {
      const handle = handles.current.get(id);
      if (!handle || !('pause' in handle)) return;
      handle.pause();
      update(id, { status: 'paused', speed: 0 });
    },
    [update],
  );

  const resume = useCallback(
    (id: string) => {
      const handle = handles.current.get(id);
      if (!handle || !('resume' in handle)) return;
      samples.current.delete(id);
      handle.resume();
      update(id, { status: 'uploading', reconnecting: false });
    },
    [update],
  );

  const retry = useCallback((id: string) => {
    setItems((list) =>
      list.map((item) =>
        item.id === id && item.retryable ? { ...item, status: 'queued', speed: 0, reconnecting: false, error: undefined, errorKind: undefined } : item,
      ),
    );
  }, []);

  const clearFinished = useCallback(() => {
    setItems((list) => {
      const keep = list.filter((i) => !isFinished(i));
      for (const item of list) if (isFinished(item)) files.current.delete(item.id);
      return keep;
    });
  }, []);

  const refreshSoon = useCallback(() => void refreshUser(), [refreshUser]);
  const { unfinished, continueUnfinished, discardUnfinished, cancelUnfinished } = useUnfinishedUploads(items, addFiles, refreshSoon);

  const onFinished = useCallback((listener: FinishedListener) => {
    listeners.current.add(listener);
    return () => void listeners.current.delete(listener);
  }, []);

  // Closing the tab would stop the uploads (the resumable ones could go on later, the others not): ask first.
  const active = items.some(isRunning);
  useEffect(() => {
    if (!active) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [active]);

  const value = useMemo(
    () => ({ items, addFiles, cancel, retry, pause, resume, clearFinished, unfinished, continueUnfinished, discardUnfinished, cancelUnfinished, onFinished }),
    [items, addFiles, cancel, retry, pause, resume, clearFinished, unfinished, continueUnfinished, discardUnfinished, cancelUnfinished, onFinished],
  );
  return (
    <UploadQueueContext.Provider value={value}>
      {children}
      <ReplacePrompt clash={clash} onChoose={(choice, forAll) => clash?.answer(choice, forAll)} />
    </UploadQueueContext.Provider>
  );
}

export function useUploadQueue(): UploadQueueValue {
  const value = useContext(UploadQueueContext);
  if (!value) throw new Error('useUploadQueue needs an UploadQueueProvider above it');
  return value;
}

/** Calls `onUploaded` whenever a file lands in this bucket, from whichever page queued it. */
export function useUploadsInto(bucketId: number, onUploaded: () => void): void {
  const { onFinished } = useUploadQueue();
  const latest = useRef(onUploaded);
  latest.current = onUploaded;
  useEffect(() => onFinished((id) => id === bucketId && latest.current()), [onFinished, bucketId]);
}
