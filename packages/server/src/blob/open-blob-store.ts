/** Picks the blob store from configuration. */
import type { BlobConfig } from '../config.js';
import type { BlobStore } from './blob-store.js';
import { FsBlobStore } from './fs-store.js';

export async function openBlobStore(config: BlobConfig): Promise<BlobStore> {
  switch (config.kind) {
    case 'fs':
      return FsBlobStore.open(config.root);
    case 's3': {
      const { S3BlobStore } = await import('./s3-store.js');
      return S3BlobStore.open(config);
    }
  }
}
