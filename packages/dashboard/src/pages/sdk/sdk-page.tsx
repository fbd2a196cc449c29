import { useEffect, useId, useMemo, useState } from 'react';
import type { CreatedApiKey } from '@pail/shared';
import { listBuckets } from '../../api/buckets';
import { CodeBlock } from '../../components/code-block';
import { PageHeader } from '../../components/layout';
import { Link } from '../../components/link';
import { Tabs } from '../../components/tabs';
import { useAsync } from '../../hooks/use-async';
import { ApiKeys } from './api-keys';
import { CREATE_KEY_FORM_ID } from './create-key-form';
import { curlSnippet, fetchSnippet, sdkSnippet, type SnippetInput } from './snippets';

export function SdkPage() {
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const buckets = useAsync((signal) => listBuckets(signal), []);
  const [bucketId, setBucketId] = useState<string>('');
  const [tab, setTab] = useState('curl');
  const selectId = useId();

  useEffect(() => {
    document.title = 'SDK · Pail';
  }, []);

  // The examples run with the key filled in: only the buckets it may use, only what it may do.
  const keyBuckets = created?.buckets ?? null;
  const usable = useMemo(() => buckets.data?.filter((b) => keyBuckets === null || keyBuckets.includes(b.id)), [buckets.data, keyBuckets]);
  const can = { read: !created || created.permissions.includes('read'), write: !created || created.permissions.includes('write') };

  // Default to the first usable bucket once they are known.
  useEffect(() => {
    const first = usable?.[0];
    if (first && !usable?.some((b) => String(b.id) === bucketId)) setBucketId(String(first.id));
  }, [usable, bucketId]);

  const chosen = usable?.find((b) => String(b.id) === bucketId) ?? null;
  const input: SnippetInput = {
    baseUrl: window.location.origin,
    bucketId: chosen ? String(chosen.id) : '<bucket-id>',
    bucketName: chosen?.name ?? null,
    apiKey: created?.key ?? null,
    can,
  };
  const toKeyForm = () => {
    const form = document.getElementById(CREATE_KEY_FORM_ID);
    form?.scrollIntoView({ block: 'center' });
    form?.querySelector('input')?.focus();
  };

  return (
    <div className="page">
      <PageHeader
        title="SDK & API keys"
        description={
          <>
            Use Pail from code with the Developer API at <code>{window.location.origin}/api/v1/buckets</code>.
          </>
        }
      />
      <div className="stack">
        <ApiKeys created={created} onCreated={setCreated} buckets={buckets.data} />

        <section className="card card-pad" aria-labelledby="snippets-title">
          <h2 id="snippets-title" className="card-title">
            Quick start
          </h2>
          <div className="snippet-controls">
            <div className="field">
              <label className="field-label" htmlFor={selectId}>
                Bucket for the examples
              </label>
              <select
                id={selectId}
                className="input select"
                value={bucketId}
                onChange={(e) => setBucketId(e.target.value)}
                disabled={!usable || usable.length === 0}
              >
                {usable && usable.length > 0 ? (
                  usable.map((b) => (
                    <option key={b.id} value={String(b.id)}>
                      {b.name} (id {b.id})
                    </option>
                  ))
                ) : (
                  <option value="">{buckets.loading ? 'Loading buckets…' : 'No buckets yet'}</option>
                )}
              </select>
            </div>
            {buckets.data && buckets.data.length === 0 ? (
              <p className="muted small">
                <Link to="/buckets">Create a bucket</Link> first; the examples use its id.
              </p>
            ) : null}
            {buckets.error ? <p className="muted small">Could not load your buckets: {buckets.error.message}</p> : null}
          </div>
          {!created ? (
            <p className="muted small">
              The examples read the key from <code>PAIL_API_KEY</code>. Create a key above and it is filled in while it is shown.
            </p>
          ) : !can.write || !can.read ? (
            <p className="notice notice-info" role="status" data-testid="key-scope-note">
              The key “{created.name}” {can.read ? 'can read but not upload' : can.write ? 'can upload but not read' : 'can neither read nor upload'}, so the
              examples {can.read ? 'list and download files' : can.write ? 'only upload' : 'cannot do anything with it'}.{' '}
              <button type="button" className="link-button" onClick={toKeyForm}>
                Create a key with the {can.write ? 'read' : 'write'} permission
              </button>{' '}
              to {can.write ? 'read files' : 'upload'} too.
            </p>
          ) : null}
          <Tabs
            label="Example language"
            selected={tab}
            onSelect={setTab}
            tabs={[
              { id: 'curl', label: 'curl', content: <CodeBlock code={curlSnippet(input)} label="curl example" /> },
              { id: 'sdk', label: 'TypeScript SDK', content: <CodeBlock code={sdkSnippet(input)} label="TypeScript SDK example" /> },
              { id: 'fetch', label: 'fetch', content: <CodeBlock code={fetchSnippet(input)} label="fetch example" /> },
            ]}
          />
        </section>
      </div>
    </div>
  );
}
