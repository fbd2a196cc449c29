/**
 * The raw (PUT) and form (POST multipart/form-data) uploads' part of a
 * request, their options, and what listing the unfinished uploads gives.
 */
import type { CallOptions } from './call-options.js';
import type { RequestSpec } from './transport.js';
import type { UnfinishedUpload } from './types.js';
import { bodyAsBlob, prepareBody, type UploadBody } from './upload-body.js';

export interface UploadOptions extends CallOptions {
  /** The file's MIME type. Default: a Blob's own type, else the server guesses from the extension. */
  contentType?: string | undefined;
}

export interface ListUnfinishedUploadsOptions extends CallOptions {
  /** Only this bucket's uploads (its id). */
  bucket?: number | undefined;
}

export interface UnfinishedUploads {
  uploads: UnfinishedUpload[];
  /** What the listed uploads hold together. */
  heldBytes: number;
}

type UploadPart = Pick<RequestSpec, 'headers' | 'signal' | 'body'>;

/** A raw upload's body, streamed (upload-body.ts), with the given Content-Type, else the body's own. */
export async function rawUpload(body: UploadBody, options: UploadOptions): Promise<UploadPart> {
  const prepared = await prepareBody(body);
  const contentType = options.contentType ?? prepared.contentType;
  return { headers: contentType ? { 'content-type': contentType } : undefined, signal: options.signal, body: prepared };
}

/** A form upload's body: the file in a part named `file`, like an HTML form's. */
export async function formUpload(body: UploadBody, filename: string, options: UploadOptions): Promise<UploadPart> {
  const blob = await bodyAsBlob(body, options.contentType);
  return {
    signal: options.signal,
    body: {
      open: () => {
        const form = new FormData();
        form.append('file', blob, filename);
        return form;
      },
      resendable: true,
      streaming: false,
    },
  };
}
