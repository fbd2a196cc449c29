/**
 * The tus protocol (@tus/server) over Pail's resumable uploads
 * (domain/resumable-uploads.ts): this DataStore is the protocol's view of
 * them. Who is asking and into which bucket is the request's, carried to it
 * by an AsyncLocalStorage (the tus server calls the store with upload ids
 * only); every rule is the domain's, and its refusals become tus answers with
 * Pail's `{error, code}` bodies.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Readable } from 'node:stream';
import { DataStore, ERRORS, Upload, type Lock, type Locker } from '@tus/utils';
import type { UploadResult } from '@pail/shared';
import type { AccountRow, BucketIdentity } from '../db/schema.js';
import { AppError } from '../domain/errors.js';
import type { StoragePorts } from '../domain/ports.js';
import type { Release, ResumableWriters } from '../domain/resumable-writers.js';
import {
  appendToResumableUpload,
  endHeldResumableUpload,
  expireResumableUploads,
  findOwnResumableUpload,
  RESUMABLE_IDLE_SECONDS,
} from '../domain/resumable-uploads.js';
import type { ResumableUploadRow } from '../db/repositories/resumable-uploads.js';

export interface TusRequestContext {
  owner: AccountRow;
  bucket: BucketIdentity;
  /** When the request arrived (ResumableWriters.arrival()). */
  arrival?: number;
  /** Aborts when the request's client goes away before its answer (a HEAD waiting for the upload stops waiting). */
  gone?: AbortSignal;
  /** Set when this request's bytes finished the upload: the file as committed. */
  finished?: UploadResult;
}

export const tusRequests = new AsyncLocalStorage<TusRequestContext>();

/** An error @tus/server answers as it is told (its `status_code` and `body`). */
export type TusAnswer = Error & { status_code: number; body: string };

const answer = (status: number, body: string): TusAnswer => Object.assign(new Error(body), { status_code: status, body });

/** A domain refusal as tus's answer, with Pail's `{error, code}` body; anything else as it is. */
export function tusError(error: unknown): unknown {
  if (error instanceof AppError) return answer(error.status, JSON.stringify({ error: error.message, code: error.code }));
  return error;
}

/** tus's own "not found", with Pail's body. */
const notFound = () =>
  answer(ERRORS.FILE_NOT_FOUND.status_code, JSON.stringify({ error: 'Upload not found (it finished, expired or was terminated)', code: 'NotFound' }));

function context(): TusRequestContext {
  const current = tusRequests.getStore();
  if (!current) throw new Error('a tus request outside tusRequests.run()');
  return current;
}

export class PailTusStore extends DataStore {
  constructor(private readonly ports: StoragePorts) {
    super();
    this.extensions = ['creation', 'creation-with-upload', 'termination', 'expiration'];
  }

  private async own(id: string): Promise<ResumableUploadRow> {
    const { owner, bucket } = context();
    try {
      return await findOwnResumableUpload(this.ports, id, owner, bucket);
    } catch (error) {
      // Only the domain's "not found" is tus's; a store failure stays a fault.
      throw error instanceof AppError ? notFound() : error;
    }
  }

  /** The upload was made by the creation hook (resumable-uploads.ts: its row holds its length against the cap). */
  override async create(upload: Upload): Promise<Upload> {
    return upload;
  }

  override async getUpload(id: string): Promise<Upload> {
    const row = await this.own(id);
    return new Upload({
      id,
      size: row.length,
      offset: row.received,
      ...(row.metadata !== null ? { metadata: JSON.parse(row.metadata) as Record<string, string | null> } : {}),
      // Expiry counts from the last bytes received (decisions.md: 24 hours without progress).
      creation_date: row.updated_at,
    });
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const row = await this.own(id);
    const current = context();
    try {
      // Only a creation carries bytes through here: a PATCH is Pail's own (patch.ts).
      const result = await appendToResumableUpload(this.ports, row, current.owner, offset, stream, { operation: 'createResumableUpload' });
      if (result.finished) current.finished = result.finished;
      return result.offset;
    } catch (error) {
      throw tusError(error);
    }
  }

  override async remove(id: string): Promise<void> {
    await this.own(id);
    // tus holds the upload (PailTusLocker) while it ends it.
    await endHeldResumableUpload(this.ports, id, { outcome: 'aborted', operation: 'resumeUpload' });
  }

  override async deleteExpired(): Promise<number> {
    return expireResumableUploads(this.ports, RESUMABLE_IDLE_SECONDS);
  }

  override getExpiration(): number {
    return RESUMABLE_IDLE_SECONDS * 1000;
  }
}

/**
 * tus's locks (HEAD, creation-with-upload, termination) are Pail's one
 * writer per upload (domain/resumable-writers.ts), the same that PATCH
 * holds: a HEAD asks a PATCH still writing to stop, and reports the offset
 * it recorded.
 */
export class PailTusLocker implements Locker {
  constructor(private readonly writers: ResumableWriters) {}

  newLock(id: string): Lock {
    let release: Release | undefined;
    return {
      lock: async (signal, requestRelease) => {
        const { arrival, gone } = tusRequests.getStore() ?? {};
        // Reading the offset or ending the upload is never refused as overtaken; it ends an older PATCH still writing.
        const turn = arrival === undefined ? undefined : { arrival, writes: false };
        release = await this.writers.hold(id, () => void requestRelease(), turn, gone ? AbortSignal.any([signal, gone]) : signal);
      },
      unlock: async () => {
        await release?.();
      },
    };
  }
}
