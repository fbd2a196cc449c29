import { useEffect, useState, type FormEvent } from 'react';
import type { StorageBucket } from '@pail/shared';
import { updateBucketLimits } from '../../api/buckets';
import { Dialog } from '../../components/dialog';
import { Field } from '../../components/field';
import { InlineError, Spinner } from '../../components/states';
import { formOf, limitsOf, SIZE_UNITS, type LimitsForm, type SizeUnit } from './bucket-limits';

interface Props {
  bucket: StorageBucket | null;
  onClose: () => void;
  onSaved: (bucket: StorageBucket) => void;
}

/** A bucket's limits: the largest file it accepts and the types it accepts (checked against the bytes by the server). */
export function BucketSettingsDialog({ bucket, onClose, onSaved }: Props) {
  const [form, setForm] = useState<LimitsForm>({ size: '', unit: 'MiB', types: '' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!bucket) return;
    setForm(formOf({ max_file_bytes: bucket.max_file_bytes, allowed_types: bucket.allowed_types }));
    setError(null);
  }, [bucket]);

  const parsed = limitsOf(form);
  const sizeProblem = 'problem' in parsed ? parsed.problem : null;

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!bucket || 'problem' in parsed) return;
    setBusy(true);
    setError(null);
    try {
      onSaved(await updateBucketLimits(bucket.id, parsed.limits));
      onClose();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      open={bucket !== null}
      title={bucket ? `Settings of ${bucket.name}` : 'Bucket settings'}
      onClose={onClose}
      busy={busy}
      footer={
        <>
          <button type="button" className="btn btn-secondary" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" form="bucket-settings" className="btn btn-primary" disabled={busy || sizeProblem !== null}>
            {busy ? <Spinner size={16} /> : null}
            Save settings
          </button>
        </>
      }
    >
      <form id="bucket-settings" className="form" onSubmit={(e) => void save(e)} noValidate>
        <div className="inline-form settings-size">
          <Field
            label="Largest file"
            className="grow"
            inputMode="decimal"
            placeholder="No limit"
            value={form.size}
            onChange={(e) => setForm({ ...form, size: e.target.value })}
            error={form.size.trim() === '' ? null : sizeProblem}
            hint="Uploads above this size are refused before they are sent. Empty: only your plan's limit."
          />
          <div className="field">
            <label className="field-label" htmlFor="bucket-size-unit">
              Unit
            </label>
            <select id="bucket-size-unit" className="input select" value={form.unit} onChange={(e) => setForm({ ...form, unit: e.target.value as SizeUnit })}>
              {Object.keys(SIZE_UNITS).map((unit) => (
                <option key={unit}>{unit}</option>
              ))}
            </select>
          </div>
        </div>
        <Field
          label="Allowed file types"
          placeholder="Any type"
          value={form.types}
          onChange={(e) => setForm({ ...form, types: e.target.value })}
          hint="MIME types or patterns, separated by commas: image/*, application/pdf. The server checks the file's bytes, not just its name. Empty: any type."
        />
        {error ? <InlineError>{error}</InlineError> : null}
      </form>
    </Dialog>
  );
}
