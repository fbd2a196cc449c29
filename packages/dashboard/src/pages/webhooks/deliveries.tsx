/** A webhook's recent deliveries: each event, its status, its attempts' answers, and a resend. */
import { listDeliveries, resendDelivery } from '../../api/webhooks';
import { ErrorState, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useToast } from '../../hooks/toast';
import { formatDateTime } from '../../lib/format';

export function Deliveries({ bucketId, webhookId }: { bucketId: number; webhookId: number }) {
  const deliveries = useAsync((signal) => listDeliveries(bucketId, webhookId, signal), [bucketId, webhookId]);
  const { notify } = useToast();
  if (deliveries.loading) return <Loading />;
  if (deliveries.error) return <ErrorState error={deliveries.error} onRetry={deliveries.reload} />;
  const rows = deliveries.data ?? [];
  if (rows.length === 0) return <p className="muted">No deliveries yet.</p>;
  const resend = async (id: number) => {
    try {
      await resendDelivery(bucketId, webhookId, id);
      notify('Delivery queued again');
    } catch (error) {
      notify(error instanceof Error ? error.message : String(error), 'error');
    }
    deliveries.reload();
  };
  return (
    <table className="table table-responsive table-flush" data-testid="deliveries">
      <caption className="sr-only">Recent deliveries</caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">File</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Response</th>
          <th scope="col">Time</th>
          <th scope="col">
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((delivery) => {
          const last = delivery.attempt_log.at(-1);
          return (
            <tr key={delivery.id}>
              <td data-label="Event">{delivery.event_name}</td>
              <td data-label="File">{delivery.key ?? '—'}</td>
              <td data-label="Status">{delivery.status}</td>
              <td data-label="Attempts">{delivery.attempts}</td>
              <td data-label="Response" title={last?.response_excerpt ?? last?.error ?? ''}>
                {last ? (last.response_code ?? last.error ?? '—') : '—'}
              </td>
              <td data-label="Time">{formatDateTime(delivery.created_at)}</td>
              <td className="cell-actions">
                <button type="button" className="btn btn-secondary btn-small" onClick={() => void resend(delivery.id)}>
                  Resend
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
