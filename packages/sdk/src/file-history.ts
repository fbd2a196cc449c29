/**
 * A file's history and a bucket's trash (decisions.md, "Versions and the
 * trash"): versioning on and off, a file's versions, restoring one, deleting
 * one for good, the trash; and a file's tags (`…/files/<filename>/tags`,
 * `{tags: {key: value}}`, S3's limits: 10 tags, keys up to 128 characters,
 * values up to 256, which the server checks: ValidationError past them).
 * Downloading a version is `downloadFile` with `{ versionId }`. A version's
 * object lock (retention, legal hold) is set here too.
 */
import type { FileLock, FileTags } from '@pail/shared';
import type { BucketId, CallOptions } from './call-options.js';
import { ClientBase } from './client-base.js';
import { encodeFilenameForDelete } from './file-paths.js';
import { legalHoldRequest, retentionRequest, type RetentionInput, type RetentionOptions } from './object-lock.js';
import { bucketSegment, fileOperationPath } from './request-paths.js';
import type { FileVersion, StorageBucket, TrashEntry, UploadResult } from './types.js';

/** Tag values by key. */
export type Tags = Record<string, string>;

/** Which part of the trash to list: names under `prefix`, after `after` (the last name of the previous page), at most `limit` (1 to 1000). */
export interface ListTrashOptions extends CallOptions {
  prefix?: string;
  after?: string;
  limit?: number;
}

/** Which page of a file's versions to list: older than `after` (a version id), at most `limit` (1 to 1000). */
export interface ListVersionsOptions extends CallOptions {
  after?: string;
  limit?: number;
}

export class FileHistoryCalls extends ClientBase {
  /**
   * Turns versioning on (`enabled`: every write keeps the version it
   * replaces, a delete keeps the file restorable) or off (`suspended`); once
   * enabled, a bucket can only be suspended. Needs `manage`.
   */
  async setVersioning(id: BucketId, versioning: 'enabled' | 'suspended', options: CallOptions = {}): Promise<StorageBucket> {
    const body = await this.transport.json<{ data: StorageBucket }>({ method: 'PATCH', path: `/${bucketSegment(id)}`, json: { versioning }, ...options });
    return body.data;
  }

  /**
   * The file's versions, newest first, delete markers too, a page at a time: `limit` (1 to 1000, default 1000)
   * older than `after` (the last version id of the previous page); a page shorter than asked is the last. Needs `read`.
   */
  async listVersions(id: BucketId, filename: string, options: ListVersionsOptions = {}): Promise<FileVersion[]> {
    const { after, limit, signal } = options;
    const path = fileOperationPath(id, filename, 'versions');
    const body = await this.transport.json<{ data: FileVersion[] }>({ method: 'GET', path, query: { after, limit }, signal });
    return body.data;
  }

  /** A copy of that version becomes the current one (a new version); nothing older is lost. Needs `write`. */
  async restoreVersion(id: BucketId, filename: string, versionId: string, options: CallOptions = {}): Promise<UploadResult> {
    const path = fileOperationPath(id, filename, 'restore');
    const body = await this.transport.json<{ data: UploadResult }>({ method: 'POST', path, json: { version_id: versionId }, ...options });
    return body.data;
  }

  /**
   * Removes one version (or delete marker) for good. Needs `delete`. A locked version is ObjectLockedError;
   * `bypassGovernance` removes one under GOVERNANCE retention when the key has the bypass-governance permission.
   */
  async deleteVersion(id: BucketId, filename: string, versionId: string, options: CallOptions & { bypassGovernance?: boolean } = {}): Promise<void> {
    const { bypassGovernance, ...call } = options;
    const path = `/${bucketSegment(id)}/files/${encodeFilenameForDelete(filename)}`;
    const query = { version_id: versionId, ...(bypassGovernance ? { bypass_governance: 'true' } : {}) };
    await this.transport.json({ method: 'DELETE', path, query, ...call });
  }

  /** The files whose latest version is a delete marker, by name, with who deleted them and when, and the version a restore brings back. */
  async listTrash(id: BucketId, options: ListTrashOptions = {}): Promise<TrashEntry[]> {
    const { prefix, after, limit, signal } = options;
    const body = await this.transport.json<{ data: TrashEntry[] }>({
      method: 'GET',
      path: `/${bucketSegment(id)}/trash`,
      query: { prefix, after, limit },
      signal,
    });
    return body.data;
  }

  /** The file's tags (`{}` when it has none). Needs `read`. */
  async getTags(id: BucketId, filename: string, options: CallOptions = {}): Promise<Tags> {
    const body = await this.transport.json<{ data: FileTags }>({ method: 'GET', path: fileOperationPath(id, filename, 'tags'), ...options });
    return body.data.tags;
  }

  /** Replaces the file's tags whole (`{}` removes them) and resolves with them as kept, sorted by key. Its bytes and ETag stay. Needs `write`. */
  async setTags(id: BucketId, filename: string, tags: Tags, options: CallOptions = {}): Promise<Tags> {
    const json: FileTags = { tags };
    const body = await this.transport.json<{ data: FileTags }>({ method: 'PUT', path: fileOperationPath(id, filename, 'tags'), json, ...options });
    return body.data.tags;
  }

  /** Removes the file's tags. Needs `write`. */
  async deleteTags(id: BucketId, filename: string, options: CallOptions = {}): Promise<void> {
    await this.transport.json({ method: 'DELETE', path: fileOperationPath(id, filename, 'tags'), ...options });
  }

  /** Sets or extends a version's retention (object lock; null removes a GOVERNANCE one with bypassGovernance); refusals are ObjectLockedError. */
  async setRetention(id: BucketId, filename: string, retention: RetentionInput | null, options: RetentionOptions = {}): Promise<FileLock> {
    return (await this.transport.json<{ data: FileLock }>(retentionRequest(id, filename, retention, options))).data;
  }

  /** Puts a file version under a legal hold (`on`), or lifts it. */
  async setLegalHold(id: BucketId, filename: string, on: boolean, options: CallOptions & { versionId?: string } = {}): Promise<FileLock> {
    return (await this.transport.json<{ data: FileLock }>(legalHoldRequest(id, filename, on, options))).data;
  }
}
