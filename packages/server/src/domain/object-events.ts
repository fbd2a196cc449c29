/**
 * The commit seam: every path that changes which files exist (or what a
 * file's row says) announces the change here once its transaction has committed (never before it, never for
 * a write that was refused or rolled back), and whatever must follow a
 * change listens here instead of being called by each path: the caches today
 * (cache/caches.ts), versioning and event notifications later.
 *
 * A listener's failure never fails or undoes the change: it is logged. A
 * listener is told synchronously and never awaited, unless it is one the
 * answer must wait for (the caches: another instance must not serve a
 * lookup older than a change that was already answered).
 */

/** The operation of the door that made a change (`PutObject`, `uploadRaw`, `resumeUpload`, …): null for the server's own sweeps, or a door that did not say. */
type Operation = string | null;

/** A file's current version: made by an upload, a copy, a completed multipart or resumable upload, or a move (the same version under a new name). */
export interface ObjectCreated {
  type: 'object-created';
  ownerId: number;
  bucketId: number;
  /** The bucket's storage name: the first segment of the file's url. */
  bucketStorageName: string;
  filename: string;
  /** Where its bytes are: unique to this version and never reused, so it names the version. */
  storageKey: string;
  size: number;
  etag: string;
  contentType: string;
  /** The version it replaced (its storage key), whose bytes are retired next; null when the name held no file. */
  replaced: string | null;
  /** `moved`: an existing version (its ObjectRemoved, cause `moved`, came first) took this name; no byte was written. */
  cause: 'stored' | 'moved';
  operation: Operation;
}

/** A file gone: deleted, purged with its deleted bucket, or moved (its ObjectCreated, cause `moved`, follows: its bytes live on). */
export interface ObjectRemoved {
  type: 'object-removed';
  ownerId: number;
  bucketId: number;
  bucketStorageName: string;
  filename: string;
  /** The version removed (ObjectCreated.storageKey). */
  storageKey: string;
  size: number;
  etag: string;
  /** `bucket-deleted`: its bucket was deleted (BucketRemoved came first), and its row purged after. */
  cause: 'deleted' | 'bucket-deleted' | 'moved';
  operation: Operation;
}

/** A file's type, stored headers or user metadata rewritten in place: its bytes, ETag and storage key stay. */
export interface ObjectEdited {
  type: 'object-edited';
  ownerId: number;
  bucketId: number;
  bucketStorageName: string;
  filename: string;
  /** The version edited (ObjectCreated.storageKey). */
  storageKey: string;
  operation: Operation;
}

/**
 * A bucket deleted: from now on no reader finds it or any file in it. Its
 * files' rows are purged after, each announced as ObjectRemoved.
 */
export interface BucketRemoved {
  type: 'bucket-removed';
  ownerId: number;
  bucketId: number;
  bucketStorageName: string;
  operation: Operation;
}

/**
 * A multipart or resumable upload ended, and with it its hold on the cap:
 * completed (its file's ObjectCreated came first), aborted or cancelled,
 * refused (its bytes broke the bucket's rules, or its bucket was deleted), or
 * expired.
 */
export interface UploadEnded {
  type: 'upload-ended';
  kind: 'multipart' | 'resumable';
  uploadId: string;
  ownerId: number;
  bucketId: number;
  filename: string;
  outcome: 'completed' | 'aborted' | 'refused' | 'expired';
  operation: Operation;
}

export type ObjectEvent = ObjectCreated | ObjectRemoved | ObjectEdited | BucketRemoved | UploadEnded;

/** Told of each change; a promise it returns is awaited only for a listener the answer waits for. */
export type ObjectEventListener = (event: ObjectEvent) => void | Promise<void>;

interface Subscription {
  listener: ObjectEventListener;
  beforeAnswer: boolean;
}

export class ObjectEvents {
  /** Replaced, never changed in place: an announcement goes on over the list it started with. */
  private subscriptions: readonly Subscription[] = [];

  constructor(private readonly onError: (error: unknown, what: string) => void) {}

  /**
   * Subscribes `listener`; returns what unsubscribes it. `beforeAnswer`: the
   * change is answered only once the listener's promise has settled.
   */
  listen(listener: ObjectEventListener, options: { beforeAnswer?: boolean } = {}): () => void {
    const subscription = { listener, beforeAnswer: options.beforeAnswer === true };
    this.subscriptions = [...this.subscriptions, subscription];
    return () => {
      this.subscriptions = this.subscriptions.filter((other) => other !== subscription);
    };
  }

  /**
   * Tells every listener, in the order they subscribed, of a change that has
   * committed. Resolves once the listeners the answer waits for are done
   * (never rejects); undefined when none has anything left to do, so a
   * commit path with nothing to wait for does not wait.
   */
  announce(event: ObjectEvent): Promise<void> | undefined {
    let waitFor: Promise<void> | undefined;
    for (const { listener, beforeAnswer } of this.subscriptions) {
      let pending: void | Promise<void>;
      try {
        pending = listener(event);
      } catch (error) {
        this.failed(error, event);
        continue;
      }
      if (!pending) continue;
      const settled = pending.then(undefined, (error: unknown) => this.failed(error, event));
      if (beforeAnswer) waitFor = waitFor ? Promise.all([waitFor, settled]).then(() => {}) : settled;
    }
    return waitFor;
  }

  private failed(error: unknown, event: ObjectEvent): void {
    this.onError(error, `a listener of ${event.type} failed (the change itself stands)`);
  }
}
