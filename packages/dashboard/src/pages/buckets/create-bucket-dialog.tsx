import { useState, type FormEvent } from 'react';
import type { StorageBucket } from '@pail/shared';
import { bucketNameProblem } from '@pail/shared/names';
import { createBucket, type Visibility } from '../../api/buckets';
import { ApiError } from '../../api/http';
import { Dialog } from '../../components/dialog';
import { Field } from '../../components/field';
import { Icon } from '../../components/icons';
import { InlineError, Spinner } from '../../components/states';

interface Props {
  open: boolean;
  onClose: () => void;
  onCreated: (bucket: StorageBucket) => void;
}

const FORM_ID = 'create-bucket-form';

export function CreateBucketDialog({ open, onClose, onCreated }: Props) {
  const [name, setName] = useState('');
  const [visibility, setVisibility] = useState<Visibility>('private');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  /** A name the server said the user already has: shown as the field's problem until the name changes. */
  const [taken, setTaken] = useState<string | null>(null);

  const problem = bucketNameProblem(name) ?? (taken === name ? `You already have a bucket named “${name}”. Pick another name.` : null);
  // Checked as the user types, but "required" only after they have tried.
  const shownProblem = name.length > 0 || touched ? problem : null;

  const reset = () => {
    setName('');
    setVisibility('private');
    setTouched(false);
    setTaken(null);
    setError(null);
  };

  const close = () => {
    if (busy) return;
    reset();
    onClose();
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (problem) return;
    setBusy(true);
    setError(null);
    try {
      const bucket = await createBucket(name, visibility);
      setBusy(false);
      reset();
      onCreated(bucket);
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError && err.status === 409) setTaken(name);
      else setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <Dialog
      open={open}
      title="Create a bucket"
      onClose={close}
      busy={busy}
      footer={
        <>
          <button type="button" className="btn btn-secondary" onClick={close} disabled={busy}>
            Cancel
          </button>
          <button type="submit" form={FORM_ID} className="btn btn-primary" disabled={busy}>
            {busy ? <Spinner size={16} /> : <Icon name="plus" />}
            Create bucket
          </button>
        </>
      }
    >
      <form id={FORM_ID} className="form" onSubmit={(event) => void submit(event)} noValidate>
        <Field
          label="Bucket name"
          name="bucket-name"
          autoComplete="off"
          spellCheck={false}
          autoCapitalize="none"
          placeholder="e.g. photos-2024"
          value={name}
          error={shownProblem}
          hint="3–40 characters: lowercase letters, digits, - and _. Starts and ends with a letter or digit."
          onChange={(e) => setName(e.target.value)}
          onBlur={() => setTouched(true)}
          autoFocus
        />
        {name.length > 0 && !problem ? (
          <p className="field-ok" aria-live="polite">
            <Icon name="check" size={14} /> “{name}” is a valid name.
          </p>
        ) : null}
        <fieldset className="fieldset">
          <legend className="field-label">Visibility</legend>
          <div className="choice-group">
            <label className={`choice${visibility === 'private' ? ' choice-selected' : ''}`}>
              <input type="radio" name="visibility" value="private" checked={visibility === 'private'} onChange={() => setVisibility('private')} />
              <span className="choice-text">
                <span className="choice-title">
                  <Icon name="lock" size={16} /> Private
                </span>
                <span className="choice-hint">Only you and your API keys can read files.</span>
              </span>
            </label>
            <label className={`choice${visibility === 'public' ? ' choice-selected' : ''}`}>
              <input type="radio" name="visibility" value="public" checked={visibility === 'public'} onChange={() => setVisibility('public')} />
              <span className="choice-text">
                <span className="choice-title">
                  <Icon name="globe" size={16} /> Public
                </span>
                <span className="choice-hint">Anyone with a file's URL can download it.</span>
              </span>
            </label>
          </div>
        </fieldset>
        {error ? <InlineError>{error}</InlineError> : null}
      </form>
    </Dialog>
  );
}
