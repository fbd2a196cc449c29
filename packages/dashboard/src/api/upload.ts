/**
 * Multipart upload with XMLHttpRequest: fetch cannot report upload progress,
 * XHR can (upload.onprogress) and can be cancelled with abort().
 */
import type { UploadResult } from '@pail/shared';
import { ApiError, errorFromBody, notifyUnauthorized } from './http';

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

export function uploadFile(bucketId: number, file: File, onProgress: (loaded: number, total: number) => void): UploadHandle {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<UploadResult>((resolve, reject) => {
    xhr.open('POST', `/api/buckets/${bucketId}/files`);
    xhr.withCredentials = true;
    xhr.responseType = 'text';
    xhr.setRequestHeader('accept', 'application/json');

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
        resolve(data ?? { filename: file.name, size: file.size, updated: false });
        return;
      }
      if (xhr.status === 401) notifyUnauthorized();
      reject(errorFromBody(xhr.status, body, xhr.statusText || 'Upload failed'));
    };
    xhr.onerror = () => reject(new ApiError(0, 'The connection was lost during the upload.'));
    xhr.onabort = () => reject(new UploadCancelled());

    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}
