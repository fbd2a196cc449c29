import '../../styles/history.css';
import { useEffect, useState, type FormEvent } from 'react';
import type { StorageBucket } from '@pail/shared';
import { updateBucketLimits } from '../../api/buckets';
import { getLifecycleRules, saveTrash } from '../../api/history';
import { Dialog } from '../../components/dialog';
import { Field } from '../../components/field';
import { InlineError, Spinner } from '../../components/states';
import { useAsync } from '../../hooks/use-async';
import { DEFAULT_TRASH_DAYS, trashDaysOf, trashDaysProblem, versioningOf } from '../../lib/trash';
import { formOf, limitsOf, SIZE_UNITS, type LimitsForm, type SizeUnit } from './bucket-limits';

interface Props {
  bucket: StorageBucket | null;
  onClose: () => void;
  onSaved: (bucket: StorageBucket) => void;
}

/**
 * A bucket's limits (the largest file it accepts and the types it accepts,
 * checked against the bytes by the server) and its trash: "Keep deleted and
 * replaced files for N days" (lib/trash.ts).
 */
export function BucketSettingsDialog({ bucket, onClose, onSaved }: Props) {
  const [form, setForm] = useState<LimitsForm>({ size: '', unit: 'MiB', types: '' });
  const [trashOn, setTrashOn] = useState(false);
  const [trashDays, setTrashDays] = useState(String(DEFAULT_TRASH_DAYS));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const bucketId = bucket?.id ?? null;
  // The trash needs versioning: an unversioned bucket has it off whatever its rules, so they are not asked for.
  const versioned = bucket !== null && versioningOf(bucket) !== 'unversioned';
  const rules = useAsync(
    (signal) => (bucketId === null ? Promise.resolve(null) : versioned ? getLifecycleRules(bucketId, signal) : Promise.resolve([])),
    [bucketId, versioned],
  );
  const savedDays = bucket && rules.data ? trashDaysOf(versioningOf(bucket), rules.data) : null;

  useEffect(() => {
    if (!bucket) return;
    setForm(formOf({ max_file_bytes: bucket.max_file_bytes, allowed_types: bucket.allowed_types }));
    setError(null);
  }, [bucket]);

  useEffect(() => {
    setTrashOn(savedDays !== null);
    setTrashDays(String(savedDays ?? DEFAULT_TRASH_DAYS));
  }, [savedDays]);

  const parsed = limitsOf(form);
  const sizeProblem = 'problem' in parsed ? parsed.problem : null;
  const daysProblem = trashOn ? trashDaysProblem(trashDays) : null;

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!bucket || 'problem' in parsed || daysProblem) return;
    setBusy(true);
    setError(null);
    try {
      let saved = await updateBucketLimits(bucket.id, parsed.limits);
      const days = trashOn ? Number(trashDays) : null;
      // Only once the rules are known, and only when the trash changes: a bucket's other rules are never touched.
      if (rules.data && days !== savedDays) saved = await saveTrash(saved, days);
      onSaved(saved);
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
          <button type="submit" form="bucket-settings" className="btn btn-primary" disabled={busy || sizeProblem !== null || daysProblem !== null}>
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
        <fieldset className="details-section settings-trash">
          <legend>Trash</legend>
          <label className="checkbox-row">
            <input type="checkbox" checked={trashOn} disabled={!rules.data} onChange={(e) => setTrashOn(e.target.checked)} />
            Keep deleted and replaced files
          </label>
          {trashOn ? (
            <Field
              label="Keep them for (days)"
              inputMode="numeric"
              value={trashDays}
              onChange={(e) => setTrashDays(e.target.value)}
              error={daysProblem}
              hint="Deleted files wait in the bucket's Trash, and replaced files in their Versions tab, for this many days, then go for good. They count against your storage while kept."
            />
          ) : (
            <p className="field-hint">Off: a deleted or replaced file is gone at once.</p>
          )}
          {rules.error ? <InlineError>{`Could not read the bucket's rules: ${rules.error.message}`}</InlineError> : null}
        </fieldset>
        {error ? <InlineError>{error}</InlineError> : null}
      </form>
    </Dialog>
  );
}
