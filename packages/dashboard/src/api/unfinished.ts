/**
 * The server's list of the user's unfinished uploads (decisions.md): tus
 * uploads from any browser or tool, and S3 multipart uploads, each with what
 * it holds of the storage cap; and cancelling one.
 */
import type { ListUnfinishedUploadsResponse, UnfinishedUpload, UnfinishedUploadKind } from '@pail/shared';
import { request } from './http';

export type { UnfinishedUpload as ServerUnfinishedUpload };

export async function listUnfinishedUploads(signal?: AbortSignal): Promise<ListUnfinishedUploadsResponse> {
  return request<ListUnfinishedUploadsResponse>('/api/uploads', { signal });
}

export async function cancelUnfinishedUpload(kind: UnfinishedUploadKind, id: string): Promise<void> {
  await request(`/api/uploads/${kind}/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** A resumable upload's tus url, which tus-js-client goes on from. */
export const resumableUploadUrl = (upload: Pick<UnfinishedUpload, 'bucket_id' | 'id'>): string =>
  new URL(`/api/buckets/${upload.bucket_id}/uploads/${encodeURIComponent(upload.id)}`, window.location.origin).href;
