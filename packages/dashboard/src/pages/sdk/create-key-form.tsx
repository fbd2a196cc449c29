import { useState, type FormEvent } from 'react';
import type { CreatedApiKey, StorageBucket } from '@pail/shared';
import { createKey } from '../../api/keys';
import { Field } from '../../components/field';
import { Icon } from '../../components/icons';
import { InlineError, Spinner } from '../../components/states';
import { limitProblems, newKeyBody, NO_LIMITS, type KeyLimits } from './key-limits';
import { KeyLimitsFields } from './key-limits-fields';

interface Props {
  buckets: StorageBucket[] | undefined;
  onCreated: (key: CreatedApiKey) => void;
}

export const CREATE_KEY_FORM_ID = 'create-key-form';

/** A name and, optionally, limits: which buckets, which permissions, until when. */
export function CreateKeyForm({ buckets, onCreated }: Props) {
  const [name, setName] = useState('');
  const [limits, setLimits] = useState<KeyLimits>(NO_LIMITS);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const problems = limitProblems(limits);
  const hasProblem = Object.keys(problems).length > 0;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) {
      setError('Give the key a name, e.g. "backup script", so you can recognise it later.');
      return;
    }
    if (hasProblem) return;
    setBusy(true);
    setError(null);
    try {
      const key = await createKey(newKeyBody(trimmed, limits));
      setName('');
      setLimits(NO_LIMITS);
      onCreated(key);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form id={CREATE_KEY_FORM_ID} className="key-form" onSubmit={(event) => void submit(event)} noValidate aria-label="Create an API key">
      <Field
        label="Key name"
        name="key-name"
        placeholder="e.g. backup script"
        autoComplete="off"
        maxLength={100}
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <KeyLimitsFields value={limits} onChange={setLimits} buckets={buckets} problems={problems} disabled={busy} />
      {error ? <InlineError>{error}</InlineError> : null}
      <div>
        <button type="submit" className="btn btn-primary" disabled={busy || hasProblem}>
          {busy ? <Spinner size={16} /> : <Icon name="key" />}
          Create API key
        </button>
      </div>
    </form>
  );
}
