/**
 * Raw-body upload (PUT) with XMLHttpRequest: fetch cannot report upload
 * progress, XHR can (upload.onprogress) and can be cancelled with abort().
 * PUT rather than multipart because the server reduces a multipart part's
 * filename to its base name, and uploads into a folder need the whole name.
 */
import type { UploadResult } from '@pail/shared';
import { ApiError, errorFromBody, filePathWithFolders, notifyUnauthorized } from './http';

export interface UploadHandle {
  promise: Promise<UploadResult>;
  abort(): void;
}

export class UploadCancelled extends Error {
  constructor() {
    super('Upload cancelled');
    this.name = 'UploadCancelled';
  }
}

/** Uploads `file` as `filename` (the whole name, folders included, e.g. `photos/cat.jpg`). */
export function uploadFile(bucketId: number, filename: string, file: File, onProgress: (loaded: number, total: number) => void): UploadHandle {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<UploadResult>((resolve, reject) => {
    xhr.open('PUT', filePathWithFolders(bucketId, filename));
    xhr.withCredentials = true;
    xhr.responseType = 'text';
    xhr.setRequestHeader('accept', 'application/json');
    // The browser sends the file's own type; without one the server guesses from the extension.

    xhr.upload.onprogress = (event) => {
      onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    };
    xhr.onload = () => {
      let body: unknown;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        body = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        const data = (body as { data?: UploadResult } | undefined)?.data;
        resolve(data ?? { filename, size: file.size, updated: false });
        return;
      }
      if (xhr.status === 401) notifyUnauthorized();
      reject(errorFromBody(xhr.status, body, xhr.statusText || 'Upload failed'));
    };
    xhr.onerror = () => reject(new ApiError(0, 'The connection was lost during the upload.'));
    xhr.onabort = () => reject(new UploadCancelled());

    xhr.send(file);
  });
  return { promise, abort: () => xhr.abort() };
}
