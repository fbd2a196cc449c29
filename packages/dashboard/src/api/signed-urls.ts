import type { SignedUrl } from '@pail/shared';
import { fileApiPath, request } from './http';

/** A link that downloads one file without a session until it expires (decisions.md, "Signed urls"). */
export async function createDownloadLink(bucketId: number, filename: string, expiresInSeconds: number): Promise<SignedUrl> {
  const res = await request<{ data: SignedUrl }>(`${fileApiPath(bucketId, filename)}/signed-url`, {
    method: 'POST',
    body: { method: 'GET', expires_in: expiresInSeconds },
  });
  return res.data;
}
