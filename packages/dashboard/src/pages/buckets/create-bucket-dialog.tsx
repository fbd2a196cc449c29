import '../../styles/history.css';
import { useState, type FormEvent } from 'react';
import type { RetentionMode, StorageBucket } from '@pail/shared';
import { bucketNameProblem } from '@pail/shared/names';
import { createBucket, type NewBucketLock, type Visibility } from '../../api/buckets';
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
  // Object lock (for backups): off, or on with the retention new files get ('none', or a mode and days).
  const [locked, setLocked] = useState(false);
  const [retention, setRetention] = useState<RetentionMode | 'none'>('none');
  const [retentionDays, setRetentionDays] = useState('30');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  /** A name the server said the user already has: shown as the field's problem until the name changes. */
  const [taken, setTaken] = useState<string | null>(null);

  const problem = bucketNameProblem(name) ?? (taken === name ? `You already have a bucket named “${name}”. Pick another name.` : null);
  const days = Number(retentionDays);
  const daysProblem =
    locked && retention !== 'none' && !(Number.isInteger(days) && days >= 1 && days <= 36500) ? 'Days: a whole number from 1 to 36,500.' : null;
  // Checked as the user types, but "required" only after they have tried.
  const shownProblem = name.length > 0 || touched ? problem : null;

  const reset = () => {
    setName('');
    setVisibility('private');
    setLocked(false);
    setRetention('none');
    setRetentionDays('30');
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
    if (problem || daysProblem) return;
    setBusy(true);
    setError(null);
    const lock: NewBucketLock | null = locked ? { defaultRetention: retention === 'none' ? null : { mode: retention, days } } : null;
    try {
      const bucket = await createBucket(name, visibility, lock);
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
        <fieldset className="fieldset">
          <legend className="field-label">Object lock</legend>
          <label className="checkbox-row">
            <input type="checkbox" checked={locked} onChange={(event) => setLocked(event.target.checked)} />
            <span>
              Make it a bucket for backups: files can be locked against removal for a time
              <span className="field-hint"> (keeps every version for good; cannot be turned off later)</span>
            </span>
          </label>
          {locked ? (
            <div className="lock-defaults">
              <div className="field">
                <label className="field-label" htmlFor="default-retention">
                  New files are kept
                </label>
                <select
                  id="default-retention"
                  className="input"
                  value={retention}
                  onChange={(event) => setRetention(event.target.value as RetentionMode | 'none')}
                >
                  <option value="none">as long as you choose, file by file</option>
                  <option value="GOVERNANCE">for a time, unless a key allowed to bypass asks (Governance)</option>
                  <option value="COMPLIANCE">for a time, by nobody removable (Compliance)</option>
                </select>
              </div>
              {retention !== 'none' ? (
                <Field
                  label="Days"
                  name="retention-days"
                  inputMode="numeric"
                  value={retentionDays}
                  error={daysProblem}
                  onChange={(event) => setRetentionDays(event.target.value)}
                />
              ) : null}
            </div>
          ) : null}
        </fieldset>
        {error ? <InlineError>{error}</InlineError> : null}
      </form>
    </Dialog>
  );
}
