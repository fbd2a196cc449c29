/**
 * Large files go up over tus (decisions.md, "Resumable uploads") with
 * tus-js-client: in pieces, each acknowledged piece kept by the server. A
 * dropped connection is retried from the server's offset; pause is an abort
 * that keeps the upload; and the upload's url is remembered in localStorage
 * under the file's fingerprint, so picking the same file again after a reload
 * goes on where it stopped. Same-origin, so the session cookie authenticates it.
 */
import type { UploadResult } from '@pail/shared';
import { defaultOptions, DetailedError, Upload } from 'tus-js-client';
import { ApiError, errorFromBody, notifyUnauthorized } from './http';
import { UploadCancelled, type UploadHandle } from './upload';

const MiB = 1024 * 1024;

/** Files this large or larger go over tus; smaller ones in one PUT, which costs one request. */
export const RESUMABLE_THRESHOLD = 8 * MiB;

/** Each PATCH carries at most this much: what a cut connection can cost. */
const CHUNK_SIZE = 8 * MiB;

/**
 * Waits before each new attempt after a network failure or a 5xx: long enough
 * in all (about two minutes) to ride out Wi-Fi dropping or a laptop waking up.
 */
const RETRY_DELAYS = [0, 1000, 2000, 4000, 8000, 15000, 30000, 60000];

export interface ResumableHandle extends UploadHandle {
  /** Stops sending; what the server has stays for `resume`. */
  pause(): void;
  resume(): void;
}

const FINGERPRINT_PREFIX = 'pail-tus';

/** `Keep both` in one bucket and a folder must not pick up another file's upload: the target name is part of the fingerprint. */
function fingerprintFor(bucketId: number, filename: string, file: File): string {
  return [FINGERPRINT_PREFIX, bucketId, filename, file.size, file.lastModified, file.type].join(':');
}

async function forget(fingerprint: string): Promise<void> {
  const storage = defaultOptions.urlStorage;
  for (const entry of await storage.findUploadsByFingerprint(fingerprint).catch(() => [])) await storage.removeUpload(entry.urlStorageKey).catch(() => {});
}

function apiErrorFrom(error: Error): ApiError {
  const response = error instanceof DetailedError ? error.originalResponse : null;
  const status = response?.getStatus() ?? 0;
  if (!response || status === 0) return new ApiError(0, 'The connection was lost during the upload.');
  if (status === 401) notifyUnauthorized();
  let body: unknown;
  try {
    body = JSON.parse(response.getBody());
  } catch {
    body = undefined;
  }
  return errorFromBody(status, body, `Upload failed (${status})`);
}

/**
 * Refusals (the cap, the bucket's limits) cannot succeed on a retry; the
 * network, a 5xx, a rate limit and an offset conflict can: the next attempt
 * asks the server's offset first (HEAD) and goes on from there.
 */
function worthRetrying(error: DetailedError): boolean {
  const status = error.originalResponse?.getStatus() ?? 0;
  if (status === 0 || status >= 500 || status === 423 || status === 429) return true;
  return status === 409 && !/"code"\s*:\s*"(?!OffsetMismatch")/.test(error.originalResponse?.getBody() ?? '');
}

/** After tus's own retries are spent on a failure worth retrying, the upload starts again this long after, until it finishes (or coming back online starts it at once). */
const RESTART_DELAY = 30_000;

export function uploadResumable(
  bucketId: number,
  filename: string,
  file: File,
  onProgress: (loaded: number, total: number) => void,
  /** Called when a piece failed on the network (or a 5xx) and will be tried again. */
  onReconnecting?: () => void,
  /** The upload to go on with (the server's list names it), rather than the one this browser remembers for the file, if any. */
  uploadUrl?: string,
): ResumableHandle {
  let upload: Upload | undefined;
  let cancelled = false;
  let paused = false;
  let finished = false;
  let restartTimer: number | undefined;
  const restartNow = () => {
    window.clearTimeout(restartTimer);
    restartTimer = undefined;
    if (cancelled || paused || finished || !upload) return;
    const current = upload;
    void current.abort(false).then(() => current.start());
  };
  // Back online, the next attempt need not wait out its retry delay (up to a minute): start again now, from the server's offset.
  window.addEventListener('online', restartNow);
  const settle = () => {
    finished = true;
    window.clearTimeout(restartTimer);
    window.removeEventListener('online', restartNow);
  };
  let rejectCancel: ((reason: Error) => void) | undefined;

  const promise = new Promise<UploadResult>((resolve, reject) => {
    rejectCancel = reject;
    upload = new Upload(file, {
      endpoint: new URL(`/api/buckets/${bucketId}/uploads`, window.location.origin).href,
      metadata: { filename, ...(file.type ? { contentType: file.type } : {}) },
      chunkSize: CHUNK_SIZE,
      ...(uploadUrl ? { uploadUrl } : {}),
      retryDelays: RETRY_DELAYS,
      fingerprint: () => Promise.resolve(fingerprintFor(bucketId, filename, file)),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      onShouldRetry: (error) => {
        const again = worthRetrying(error);
        if (again) onReconnecting?.();
        return again;
      },
      onProgress: (sent, total) => onProgress(sent, total),
      onSuccess: () => {
        settle();
        // Gone on with from the server's list: what this browser remembered of it under the file's fingerprint is done too.
        if (uploadUrl) void forgetUploadUrl(uploadUrl);
        resolve({ filename, size: file.size, updated: false });
      },
      onError: (error) => {
        // The network (or the server) is still away after every retry: keep the upload and try again later, for as long as it takes.
        if (!cancelled && error instanceof DetailedError && worthRetrying(error)) {
          onReconnecting?.();
          window.clearTimeout(restartTimer);
          restartTimer = window.setTimeout(restartNow, RESTART_DELAY);
          return;
        }
        settle();
        const failure = apiErrorFrom(error);
        // Refused for good (the cap, the bucket's limits): nothing to go on with after a reload.
        if (failure.status >= 400 && failure.status < 500) void forget(fingerprintFor(bucketId, filename, file));
        if (!cancelled) reject(failure);
      },
    });
    const started = upload;
    if (uploadUrl) {
      started.start();
      return;
    }
    // An upload of this very file left unfinished (a reload, a closed tab) goes on from where the server has it.
    started.findPreviousUploads().then(
      (previous) => {
        const latest = previous.sort((a, b) => b.creationTime.localeCompare(a.creationTime))[0];
        if (latest) started.resumeFromPreviousUpload(latest);
        if (!cancelled && !paused) started.start();
      },
      () => {
        if (!cancelled && !paused) started.start();
      },
    );
  });

  return {
    promise,
    pause: () => {
      paused = true;
      window.clearTimeout(restartTimer);
      void upload?.abort(false);
    },
    resume: () => {
      paused = false;
      upload?.start();
    },
    abort: () => {
      cancelled = true;
      settle();
      // Terminated, so the server gives back what it reserved of the cap; the stored url goes too.
      void upload?.abort(true).catch(() => {});
      rejectCancel?.(new UploadCancelled());
    },
  };
}

/** An upload this browser started and did not finish (the page was reloaded or closed): the same file picked again goes on. */
export interface UnfinishedUpload {
  /** Its key in localStorage. */
  key: string;
  bucketId: number;
  filename: string;
  size: number;
  /** Bytes the server has. */
  offset: number;
  url: string;
}

/**
 * The unfinished uploads remembered in localStorage that the server still
 * has; the ones it no longer has (finished, expired, refused) are forgotten.
 */
export async function findUnfinishedUploads(): Promise<UnfinishedUpload[]> {
  const storage = defaultOptions.urlStorage;
  const stored = await storage.findAllUploads().catch(() => []);
  const found = await Promise.all(
    stored.map(async (entry): Promise<UnfinishedUpload | null> => {
      // Keys are `tus::<fingerprint>::<n>`, and our fingerprints start `pail-tus:<bucket id>:`.
      const bucketId = Number(new RegExp(`^tus::${FINGERPRINT_PREFIX}:(\\d+):`).exec(entry.urlStorageKey)?.[1]);
      const filename = entry.metadata.filename;
      if (!bucketId || !filename || entry.uploadUrl === null || entry.size === null) return null;
      const head = await fetch(entry.uploadUrl, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' }, credentials: 'same-origin' }).catch(() => null);
      if (head?.status === 404 || head?.status === 410) {
        await storage.removeUpload(entry.urlStorageKey).catch(() => {});
        return null;
      }
      const offset = Number(head?.headers.get('upload-offset') ?? 0);
      return { key: entry.urlStorageKey, bucketId, filename, size: entry.size, offset, url: entry.uploadUrl };
    }),
  );
  return found.filter((u): u is UnfinishedUpload => u !== null);
}

/** Gives up an unfinished upload: the server frees what it held of the cap, and the browser forgets it. */
export async function discardUnfinishedUpload(upload: UnfinishedUpload): Promise<void> {
  await Upload.terminate(upload.url, { retryDelays: [] }).catch(() => {});
  await defaultOptions.urlStorage.removeUpload(upload.key).catch(() => {});
}

/** Forgets what this browser remembers of an upload (cancelled from the server's list). */
export async function forgetUploadUrl(url: string): Promise<void> {
  const storage = defaultOptions.urlStorage;
  for (const entry of await storage.findAllUploads().catch(() => [])) {
    if (entry.uploadUrl === url) await storage.removeUpload(entry.urlStorageKey).catch(() => {});
  }
}
