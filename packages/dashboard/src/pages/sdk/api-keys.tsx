import { useState } from 'react';
import type { ApiKey, CreatedApiKey, StorageBucket } from '@pail/shared';
import { listKeys, revokeKey } from '../../api/keys';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyButton } from '../../components/copy-button';
import { Icon } from '../../components/icons';
import { EmptyState, ErrorState, Loading } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { useToast } from '../../hooks/toast';
import { CreateKeyForm } from './create-key-form';
import { KeyTable } from './key-table';

interface Props {
  created: CreatedApiKey | null;
  onCreated: (key: CreatedApiKey | null) => void;
  /** The user's buckets, to choose a key's buckets and to name them in the list. */
  buckets: StorageBucket[] | undefined;
}

/** The record the list shows, from the create answer (which adds the secret). */
function listed({ key: _secret, ...record }: CreatedApiKey): ApiKey {
  return { ...record, last_used_at: null };
}

export function ApiKeys({ created, onCreated, buckets }: Props) {
  const keys = useAsync((signal) => listKeys(signal), []);
  const { notify } = useToast();
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  const added = (key: CreatedApiKey) => {
    onCreated(key);
    keys.setData((list) => [...(list ?? []), listed(key)]);
  };

  return (
    <section className="card card-pad" aria-labelledby="keys-title">
      <h2 id="keys-title" className="card-title">
        API keys
      </h2>
      <p className="muted">
        Keys let programs use the Developer API as you. Each key sees only your buckets, and can be limited to some of them, to some permissions and to a time.
      </p>

      {created ? (
        <div className="secret" role="region" aria-label="New API key">
          <div className="secret-head">
            <Icon name="alert" />
            <strong>Copy your new key “{created.name}” now. It will not be shown again.</strong>
          </div>
          <p className="small">Store it somewhere safe, like a password manager or your deployment's secrets. Anyone with it can do whatever the key allows.</p>
          <div className="secret-value">
            <code data-testid="new-api-key" aria-label="New API key value">
              {created.key}
            </code>
            <CopyButton text={created.key} label="Copy API key" className="btn btn-primary">
              Copy key
            </CopyButton>
          </div>
          <p className="small">For S3 tools (the AWS CLI, rclone, s3cmd, boto3, the AWS SDKs), the same key as an S3 credential:</p>
          <div className="secret-value">
            <code data-testid="new-access-key-id" aria-label="S3 access key id">
              {created.access_key_id}
            </code>
            <CopyButton text={created.access_key_id} label="Copy S3 access key id" className="btn btn-secondary">
              Copy access key id
            </CopyButton>
          </div>
          <div className="secret-value">
            <code data-testid="new-secret-access-key" aria-label="S3 secret access key">
              {created.secret_access_key}
            </code>
            <CopyButton text={created.secret_access_key} label="Copy S3 secret access key" className="btn btn-secondary">
              Copy secret
            </CopyButton>
          </div>
          <button type="button" className="btn btn-ghost btn-small" onClick={() => onCreated(null)}>
            I have saved it, hide the key
          </button>
        </div>
      ) : null}

      <CreateKeyForm buckets={buckets} onCreated={added} />

      {keys.loading ? (
        <Loading label="Loading keys…" />
      ) : keys.error ? (
        <ErrorState title="Could not load your keys" error={keys.error} onRetry={keys.reload} />
      ) : keys.data && keys.data.length === 0 ? (
        <EmptyState icon="key" title="No API keys yet">
          <p>Create one above to use the SDK, curl or any HTTP client.</p>
        </EmptyState>
      ) : keys.data ? (
        <KeyTable keys={keys.data} buckets={buckets} onRevoke={setRevoking} />
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
