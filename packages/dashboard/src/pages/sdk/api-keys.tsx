import { useState, type FormEvent } from 'react';
import type { ApiKey, CreatedApiKey } from '@pail/shared';
import { createKey, listKeys, revokeKey } from '../../api/keys';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyButton } from '../../components/copy-button';
import { Field } from '../../components/field';
import { Icon } from '../../components/icons';
import { EmptyState, ErrorState, InlineError, Loading, Spinner } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useToast } from '../../hooks/toast';
import { formatDateTime } from '../../lib/format';

interface Props {
  created: CreatedApiKey | null;
  onCreated: (key: CreatedApiKey | null) => void;
}

export function ApiKeys({ created, onCreated }: Props) {
  const keys = useAsync((signal) => listKeys(signal), []);
  const { notify } = useToast();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) {
      setError('Give the key a name, e.g. "backup script", so you can recognise it later.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const key = await createKey(trimmed);
      onCreated(key);
      setName('');
      keys.setData((list) => [...(list ?? []), { id: key.id, name: key.name, prefix: key.prefix, created_at: key.created_at, last_used_at: null }]);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card card-pad" aria-labelledby="keys-title">
      <h2 id="keys-title" className="card-title">
        API keys
      </h2>
      <p className="muted">Keys let programs use the Developer API as you. Each key sees only your buckets.</p>

      {created ? (
        <div className="secret" role="region" aria-label="New API key">
          <div className="secret-head">
            <Icon name="alert" />
            <strong>Copy your new key “{created.name}” now. It will not be shown again.</strong>
          </div>
          <p className="small">
            Store it somewhere safe, like a password manager or your deployment's secrets. Anyone with it can read and change your buckets.
          </p>
          <div className="secret-value">
            <code data-testid="new-api-key" aria-label="New API key value">
              {created.key}
            </code>
            <CopyButton text={created.key} label="Copy API key" className="btn btn-primary">
              Copy key
            </CopyButton>
          </div>
          <button type="button" className="btn btn-ghost btn-small" onClick={() => onCreated(null)}>
            I have saved it, hide the key
          </button>
        </div>
      ) : null}

      <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate>
        <Field
          label="Key name"
          name="key-name"
          placeholder="e.g. backup script"
          autoComplete="off"
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          className="grow"
        />
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? <Spinner size={16} /> : <Icon name="key" />}
          Create API key
        </button>
      </form>
      {error ? <InlineError>{error}</InlineError> : null}

      {keys.loading ? (
        <Loading label="Loading keys…" />
      ) : keys.error ? (
        <ErrorState title="Could not load your keys" error={keys.error} onRetry={keys.reload} />
      ) : keys.data && keys.data.length === 0 ? (
        <EmptyState icon="key" title="No API keys yet">
          <p>Create one above to use the SDK, curl or any HTTP client.</p>
        </EmptyState>
      ) : keys.data ? (
        <table className="table table-responsive table-flush">
          <caption className="sr-only">Your API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.id}>
                <th scope="row" className="cell-name">
                  <span className="key-name">
                    <Icon name="key" /> {key.name}
                  </span>
                </th>
                <td data-label="Key">
                  <code className="key-prefix">{key.prefix}…</code>
                </td>
                <td data-label="Created">{formatDateTime(key.created_at)}</td>
                <td data-label="Last used">{formatDateTime(key.last_used_at)}</td>
                <td className="cell-actions">
                  <button
                    type="button"
                    className="btn btn-secondary btn-small btn-danger-text"
                    aria-label={`Revoke key ${key.name}`}
                    onClick={() => setRevoking(key)}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      <ConfirmDialog
        open={revoking !== null}
        title={revoking ? `Revoke key “${revoking.name}”?` : 'Revoke key'}
        confirmLabel="Revoke key"
        onClose={() => setRevoking(null)}
        onConfirm={async () => {
          if (!revoking) return;
          await revokeKey(revoking.id);
          keys.setData((list) => list?.filter((k) => k.id !== revoking.id));
          if (created?.id === revoking.id) onCreated(null);
          notify(`Key ${revoking.name} revoked`);
        }}
      >
        {revoking ? (
          <p>
            Programs using the key <code>{revoking.prefix}…</code> will get <strong>401 Unauthorized</strong> from now on. This cannot be undone.
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}
