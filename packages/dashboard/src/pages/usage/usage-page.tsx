import { useEffect } from 'react';
import { listBuckets } from '../../api/buckets';
import { Icon } from '../../components/icons';
import { PageHeader } from '../../components/layout';
import { Link } from '../../components/link';
import { ProgressBar } from '../../components/progress-bar';
import { EmptyState, ErrorState, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useSession, useUser } from '../../hooks/session';
import { formatBytes, formatPercent, pluralize } from '../../lib/format';
import { BucketChart } from './bucket-chart';
import { UnfinishedUploadsPanel } from './unfinished-uploads-panel';

export function UsagePage() {
  const user = useUser();
  const { refreshUser } = useSession();
  const buckets = useAsync((signal) => listBuckets(signal), []);

  useEffect(() => {
    document.title = 'Usage · Pail';
    void refreshUser();
  }, [refreshUser]);

  const used = user.storage_used_bytes;
  // Unfinished uploads hold bytes against the cap beside what is stored.
  const held = user.storage_held_bytes ?? 0;
  const limit = user.storage_limit_bytes;
  const fraction = limit > 0 ? (used + held) / limit : 0;
  const tone = fraction >= 0.95 ? 'danger' : fraction >= 0.8 ? 'warning' : 'default';
  const left = Math.max(0, limit - used - held);

  return (
    <div className="page">
      <PageHeader title="Usage" description={`Your account is on the ${user.plan} plan.`} />

      <div className="grid grid-usage">
        <section className="card card-pad" aria-labelledby="storage-title">
          <h2 id="storage-title" className="card-title">
            Storage
          </h2>
          <p className="metric">
            <span className="metric-value">{formatBytes(used)}</span>
            <span className="metric-of"> of {formatBytes(limit)} used</span>
          </p>
          <ProgressBar
            value={used + held}
            max={limit}
            label="Storage used"
            valueText={`${formatBytes(used)} of ${formatBytes(limit)}${held > 0 ? `, ${formatBytes(held)} held` : ''} (${formatPercent(fraction)})`}
            tone={tone}
          />
          <p className="metric-note" data-testid="storage-note">
            {formatPercent(fraction)} used · {held > 0 ? `${formatBytes(held)} held by unfinished uploads · ` : ''}
            {formatBytes(left)} left
          </p>
          {tone !== 'default' ? (
            <p className={`notice notice-${tone === 'danger' ? 'error' : 'warning'}`}>
              {fraction >= 1
                ? 'Storage is full: new uploads will be refused until you delete files.'
                : 'You are close to your storage limit. Uploads that go over it will be refused.'}
              {held > 0 ? ' Cancelling unfinished uploads frees what they hold.' : ''}
            </p>
          ) : null}
        </section>

        <section className="card card-pad" aria-labelledby="plan-title">
          <h2 id="plan-title" className="card-title">
            Plan
          </h2>
          <p className="metric">
            <span className="metric-value plan-name">{user.plan}</span>
          </p>
          <dl className="details details-compact">
            <div>
              <dt>Developer API rate limit</dt>
              <dd>{user.rate_limit_per_minute.toLocaleString()} requests per minute</dd>
            </div>
            <div>
              <dt>Storage cap</dt>
              <dd>{formatBytes(limit)}</dd>
            </div>
          </dl>
          <p className="muted small">All your API keys share one rate-limit budget. Plans are changed by the server's operator.</p>
        </section>
      </div>

      <UnfinishedUploadsPanel />

      <section className="card card-pad" aria-labelledby="per-bucket-title">
        <h2 id="per-bucket-title" className="card-title">
          Storage by bucket
        </h2>
        {buckets.loading ? (
          <Loading label="Loading buckets…" />
        ) : buckets.error ? (
          <ErrorState title="Could not load your buckets" error={buckets.error} onRetry={buckets.reload} />
        ) : buckets.data && buckets.data.length === 0 ? (
          <EmptyState
            icon="chart"
            title="Nothing stored yet"
            action={
              <Link to="/buckets" className="btn btn-secondary">
                <Icon name="bucket" /> Go to buckets
              </Link>
            }
          >
            <p>Create a bucket and upload files to see how your storage is spread.</p>
          </EmptyState>
        ) : buckets.data ? (
          <>
            <p className="muted small">
              {pluralize(buckets.data.length, 'bucket')},{' '}
              {pluralize(
                buckets.data.reduce((s, b) => s + b.object_count, 0),
                'file',
              )}
            </p>
            <BucketChart buckets={buckets.data} />
          </>
        ) : null}
      </section>
    </div>
  );
}
