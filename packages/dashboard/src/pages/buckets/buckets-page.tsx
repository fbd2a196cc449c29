import { useEffect, useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { listBuckets } from '../../api/buckets';
import { Icon } from '../../components/icons';
import { PageHeader } from '../../components/layout';
import { Link } from '../../components/link';
import { EmptyState, ErrorState, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useSession } from '../../hooks/session';
import { useToast } from '../../hooks/toast';
import { formatBytes, formatDate, pluralize } from '../../lib/format';
import { navigate } from '../../lib/router';
import { CreateBucketDialog } from './create-bucket-dialog';
import { DeleteBucketDialog } from './delete-bucket-dialog';
import { VisibilitySwitch } from './visibility-switch';

export function BucketsPage() {
  const buckets = useAsync((signal) => listBuckets(signal), []);
  const { refreshUser } = useSession();
  const { notify } = useToast();
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<StorageBucket | null>(null);

  useEffect(() => {
    document.title = 'Buckets · Pail';
  }, []);

  const replace = (bucket: StorageBucket) => buckets.setData((list) => list?.map((b) => (b.id === bucket.id ? bucket : b)));

  const newBucketButton = (
    <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
      <Icon name="plus" /> New bucket
    </button>
  );

  const list = buckets.data;
  const totalBytes = list?.reduce((sum, b) => sum + b.total_bytes, 0) ?? 0;

  return (
    <div className="page">
      <PageHeader
        title="Buckets"
        description={
          list && list.length > 0
            ? `${pluralize(list.length, 'bucket')} · ${formatBytes(totalBytes)} stored`
            : 'Containers for your files, each private or public.'
        }
        actions={newBucketButton}
      />

      {buckets.loading ? (
        <Loading label="Loading buckets…" />
      ) : buckets.error ? (
        <ErrorState title="Could not load your buckets" error={buckets.error} onRetry={buckets.reload} />
      ) : list && list.length === 0 ? (
        <EmptyState icon="bucket" title="No buckets yet" action={newBucketButton}>
          <p>Create a bucket to start uploading files. You can make it public later.</p>
        </EmptyState>
      ) : list ? (
        <div className="card">
          <table className="table table-responsive">
            <caption className="sr-only">Your buckets</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Visibility</th>
                <th scope="col" className="num">
                  Objects
                </th>
                <th scope="col" className="num">
                  Size
                </th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((bucket) => (
                <tr key={bucket.id}>
                  <th scope="row" className="cell-name">
                    <Link to={`/buckets/${bucket.id}`} className="row-link">
                      <Icon name="bucket" />
                      <span>{bucket.name}</span>
                    </Link>
                  </th>
                  <td data-label="Visibility">
                    <VisibilitySwitch bucket={bucket} onChanged={replace} />
                  </td>
                  <td data-label="Objects" className="num">
                    {bucket.object_count.toLocaleString()}
                  </td>
                  <td data-label="Size" className="num">
                    {formatBytes(bucket.total_bytes)}
                  </td>
                  <td data-label="Created">
                    <time dateTime={bucket.created_at}>{formatDate(bucket.created_at)}</time>
                  </td>
                  <td className="cell-actions">
                    <button
                      type="button"
                      className="btn btn-ghost btn-icon btn-danger-ghost"
                      aria-label={`Delete bucket ${bucket.name}`}
                      title={`Delete bucket ${bucket.name}`}
                      onClick={() => setDeleting(bucket)}
                    >
                      <Icon name="trash" />
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}

      <CreateBucketDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(bucket) => {
          setCreating(false);
          buckets.setData((current) => [...(current ?? []), bucket]);
          notify(`Bucket ${bucket.name} created`);
          navigate(`/buckets/${bucket.id}`);
        }}
      />
      <DeleteBucketDialog
        bucket={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={(bucket) => {
          buckets.setData((current) => current?.filter((b) => b.id !== bucket.id));
          notify(`Bucket ${bucket.name} deleted`);
          void refreshUser();
        }}
      />
    </div>
  );
}
