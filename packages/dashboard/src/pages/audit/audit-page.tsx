/** Your audit log (issue 39): who changed keys, buckets, visibility and webhooks, newest first, a page at a time. */
import { useEffect, useState } from 'react';
import type { AuditEntry } from '@pail/shared';
import { auditPage } from '../../api/webhooks';
import { PageHeader } from '../../components/layout';
import { EmptyState, ErrorState, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { formatDateTime } from '../../lib/format';

export function AuditPage() {
  const first = useAsync((signal) => auditPage(null, signal), []);
  const [more, setMore] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);

  useEffect(() => {
    document.title = 'Audit log · Pail';
  }, []);
  useEffect(() => {
    setMore([]);
    setCursor(first.data?.next_cursor ?? null);
  }, [first.data]);

  if (first.loading) return <Loading />;
  if (first.error) return <ErrorState error={first.error} onRetry={first.reload} />;
  const entries = [...(first.data?.data ?? []), ...more];
  const loadMore = async () => {
    const page = await auditPage(cursor);
    setMore((current) => [...current, ...page.data]);
    setCursor(page.next_cursor);
  };
  return (
    <div className="page">
      <PageHeader
        title="Audit log"
        description="Who changed what in your account: keys, buckets, visibility and webhooks. Entries are never edited or removed."
      />
      {entries.length === 0 ? (
        <EmptyState icon="info" title="Nothing yet" />
      ) : (
        <table className="table table-responsive table-flush" data-testid="audit">
          <caption className="sr-only">Audit log</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Target</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id}>
                <td data-label="When">{formatDateTime(entry.at)}</td>
                <td data-label="Who">{entry.actor}</td>
                <td data-label="What">{entry.action}</td>
                <td data-label="Target">{entry.target ?? '—'}</td>
                <td data-label="Details">
                  <code>{entry.details ? JSON.stringify(entry.details) : ''}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor ? (
        <button type="button" className="btn btn-secondary" onClick={() => void loadMore()}>
          Load more
        </button>
      ) : null}
    </div>
  );
}
