import type { StorageBucket } from '@pail/shared';
import { deleteBucket } from '../../api/buckets';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { formatBytes, pluralize } from '../../lib/format';

interface Props {
  bucket: StorageBucket | null;
  onClose: () => void;
  onDeleted: (bucket: StorageBucket) => void;
}

/** Names the bucket and says exactly what goes with it. */
export function DeleteBucketDialog({ bucket, onClose, onDeleted }: Props) {
  return (
    <ConfirmDialog
      open={bucket !== null}
      title={bucket ? `Delete bucket “${bucket.name}”?` : 'Delete bucket'}
      confirmLabel="Delete bucket"
      onClose={onClose}
      onConfirm={async () => {
        if (!bucket) return;
        await deleteBucket(bucket.id);
        onDeleted(bucket);
      }}
    >
      {bucket ? (
        <div className="prose">
          {bucket.object_count > 0 ? (
            <p>
              This permanently deletes <strong>{bucket.name}</strong> and the <strong>{pluralize(bucket.object_count, 'file')}</strong> in it (
              <strong>{formatBytes(bucket.total_bytes)}</strong>).
            </p>
          ) : (
            <p>
              This permanently deletes the empty bucket <strong>{bucket.name}</strong>.
            </p>
          )}
          {bucket.public && bucket.object_count > 0 ? <p>Its public file URLs will stop working for everyone who uses them.</p> : null}
          <p className="text-danger">This cannot be undone.</p>
        </div>
      ) : null}
    </ConfirmDialog>
  );
}
