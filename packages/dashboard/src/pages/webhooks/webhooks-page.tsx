/**
 * A bucket's webhooks (issue 39): add one (its secret shown once), pause or
 * resume it, rotate its secret, delete it, and see its recent deliveries with
 * a resend; an endpoint the server disabled says why.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { WEBHOOK_EVENT_TYPES, type Webhook, type WebhookWithSecret } from '@pail/shared';
import { getBucket } from '../../api/buckets';
import { createWebhook, deleteWebhook, listWebhooks, rotateWebhookSecret, updateWebhook } from '../../api/webhooks';
import { CopyButton } from '../../components/copy-button';
import { Field } from '../../components/field';
import { PageHeader } from '../../components/layout';
import { Link } from '../../components/link';
import { EmptyState, ErrorState, InlineError, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useToast } from '../../hooks/toast';
import { Deliveries } from './deliveries';

export function WebhooksPage({ bucketId }: { bucketId: number }) {
  const bucket = useAsync((signal) => getBucket(bucketId, signal), [bucketId]);
  const hooks = useAsync((signal) => listWebhooks(bucketId, signal), [bucketId]);
  const [secret, setSecret] = useState<WebhookWithSecret | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const { notify } = useToast();

  useEffect(() => {
    document.title = 'Webhooks · Pail';
  }, []);

  const act = async (what: () => Promise<unknown>, done: string) => {
    try {
      await what();
      notify(done);
    } catch (error) {
      notify(error instanceof Error ? error.message : String(error), 'error');
    }
    hooks.reload();
  };

  if (bucket.error) return <ErrorState error={bucket.error} onRetry={bucket.reload} />;
  return (
    <div className="page">
      <PageHeader
        eyebrow={<Link to={`/buckets/${bucketId}`}>{bucket.data?.name ?? 'Bucket'}</Link>}
        title="Webhooks"
        description="Each change in this bucket is sent to your endpoints as S3 event JSON, signed (Standard Webhooks), retried for 3 days until it is received."
      />
      <div className="stack">
        <NewWebhookForm
          bucketId={bucketId}
          onCreated={(created) => {
            setSecret(created);
            hooks.reload();
          }}
        />
        {secret ? (
          <section className="card" aria-label="Signing secret" data-testid="webhook-secret">
            <p>
              Signing secret of <code>{secret.url}</code>. Store it now: it is shown only this once.
            </p>
            <code className="secret">{secret.secret}</code>{' '}
            <CopyButton text={secret.secret} label="Copy secret">
              Copy secret
            </CopyButton>{' '}
            <button type="button" className="btn btn-secondary btn-small" onClick={() => setSecret(null)}>
              Done
            </button>
          </section>
        ) : null}
        {hooks.loading ? <Loading /> : null}
        {hooks.error ? <ErrorState error={hooks.error} onRetry={hooks.reload} /> : null}
        {hooks.data && hooks.data.length === 0 ? (
          <EmptyState icon="link" title="No webhooks yet">
            Add an endpoint above to hear of new and removed files.
          </EmptyState>
        ) : null}
        {hooks.data?.map((hook) => (
          <WebhookCard
            key={hook.id}
            hook={hook}
            open={open === hook.id}
            onToggle={() => setOpen(open === hook.id ? null : hook.id)}
            onEnable={(enabled) => void act(() => updateWebhook(bucketId, hook.id, { enabled }), enabled ? 'Webhook enabled' : 'Webhook disabled')}
            onRotate={() => void act(async () => setSecret(await rotateWebhookSecret(bucketId, hook.id)), 'Secret rotated: the old one signs too for a day')}
            onDelete={() => void act(() => deleteWebhook(bucketId, hook.id), 'Webhook deleted')}
          />
        ))}
      </div>
    </div>
  );
}

function WebhookCard(props: {
  hook: Webhook;
  open: boolean;
  onToggle: () => void;
  onEnable: (enabled: boolean) => void;
  onRotate: () => void;
  onDelete: () => void;
}) {
  const { hook } = props;
  return (
    <section className="card" aria-label={`Webhook ${hook.url}`} data-testid="webhook">
      <div className="row-between">
        <div>
          <code>{hook.url}</code>
          <div className="muted">
            {hook.events.join(', ')}
            {hook.prefix ? ` · prefix ${hook.prefix}` : ''}
            {hook.suffix ? ` · suffix ${hook.suffix}` : ''} · {hook.pending} pending
          </div>
          <div data-testid="webhook-status">{hook.enabled ? 'Enabled' : 'Disabled'}</div>
          {hook.disabled_reason ? <InlineError>{hook.disabled_reason}</InlineError> : null}
        </div>
        <div className="page-actions">
          <button type="button" className="btn btn-secondary btn-small" onClick={() => props.onEnable(!hook.enabled)}>
            {hook.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" className="btn btn-secondary btn-small" onClick={props.onRotate}>
            Rotate secret
          </button>
          <button type="button" className="btn btn-secondary btn-small" aria-expanded={props.open} onClick={props.onToggle}>
            Deliveries
          </button>
          <button type="button" className="btn btn-secondary btn-small btn-danger-text" onClick={props.onDelete}>
            Delete
          </button>
        </div>
      </div>
      {props.open ? <Deliveries bucketId={hook.bucket_id} webhookId={hook.id} /> : null}
    </section>
  );
}

function NewWebhookForm({ bucketId, onCreated }: { bucketId: number; onCreated: (created: WebhookWithSecret) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['object.created', 'object.removed']);
  const [prefix, setPrefix] = useState('');
  const [suffix, setSuffix] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const input = { url, events: events as never, ...(prefix ? { prefix } : {}), ...(suffix ? { suffix } : {}) };
      onCreated(await createWebhook(bucketId, input));
      setUrl('');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card stack" onSubmit={(event) => void submit(event)} aria-label="Add a webhook">
      <Field label="Endpoint url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hooks/pail" />
      <fieldset>
        <legend>Events</legend>
        {WEBHOOK_EVENT_TYPES.map((type) => (
          <label key={type} className="checkbox">
            <input
              type="checkbox"
              checked={events.includes(type)}
              onChange={(e) => setEvents(e.target.checked ? [...events, type] : events.filter((other) => other !== type))}
            />{' '}
            {type}
          </label>
        ))}
      </fieldset>
      <Field label="Only names starting with (optional)" value={prefix} onChange={(e) => setPrefix(e.target.value)} />
      <Field label="Only names ending with (optional)" value={suffix} onChange={(e) => setSuffix(e.target.value)} />
      {error ? <InlineError>{error}</InlineError> : null}
      <div>
        <button type="submit" className="btn btn-primary" disabled={busy || events.length === 0}>
          Add webhook
        </button>
      </div>
    </form>
  );
}
