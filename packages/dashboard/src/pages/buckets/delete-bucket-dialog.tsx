import { useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { deleteBucket } from '../../api/buckets';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Field } from '../../components/field';
import { formatBytes, pluralize } from '../../lib/format';

interface Props {
  bucket: StorageBucket | null;
  onClose: () => void;
  onDeleted: (bucket: StorageBucket) => void;
}

/**
 * Names the bucket and says exactly what goes with it. A bucket that holds
 * files is deleted only after its name is typed, as GitHub and Supabase ask:
 * a click alone is too easy to give to the wrong row.
 */
export function DeleteBucketDialog({ bucket, onClose, onDeleted }: Props) {
  const [typed, setTyped] = useState('');
  const needsName = bucket !== null && bucket.object_count > 0;
  const close = () => {
    setTyped('');
    onClose();
  };
  return (
    <ConfirmDialog
      open={bucket !== null}
      title={bucket ? `Delete bucket “${bucket.name}”?` : 'Delete bucket'}
      confirmLabel="Delete bucket"
      confirmDisabled={needsName && typed.trim() !== bucket.name}
      onClose={close}
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
          {needsName ? (
            <Field label={`Type ${bucket.name} to confirm`} autoComplete="off" spellCheck={false} value={typed} onChange={(e) => setTyped(e.target.value)} />
          ) : null}
        </div>
      ) : null}
    </ConfirmDialog>
  );
}
