import { useId } from 'react';
import type { Permission, StorageBucket } from '@pail/shared';
import { Icon } from '../../components/icons';
import { ALL_PERMISSIONS, PERMISSION_HINTS, type ExpiryKind, type KeyLimits } from './key-limits';

interface Props {
  value: KeyLimits;
  onChange: (next: KeyLimits) => void;
  buckets: StorageBucket[] | undefined;
  problems: { permissions?: string; expiry?: string };
  disabled?: boolean;
}

/** Which buckets, which permissions, and until when: three groups side by side. */
export function KeyLimitsFields({ value, onChange, buckets, problems, disabled = false }: Props) {
  const set = (patch: Partial<KeyLimits>) => onChange({ ...value, ...patch });
  return (
    <div className="key-limits">
      <BucketChoice chosen={value.buckets} buckets={buckets} onChange={(ids) => set({ buckets: ids })} disabled={disabled} />
      <PermissionChoice chosen={value.permissions} onChange={(permissions) => set({ permissions })} problem={problems.permissions} disabled={disabled} />
      <ExpiryChoice value={value} onChange={set} problem={problems.expiry} disabled={disabled} />
    </div>
  );
}

function toggle<T>(list: T[], item: T, on: boolean): T[] {
  return on ? [...list.filter((x) => x !== item), item] : list.filter((x) => x !== item);
}

function BucketChoice({
  chosen,
  buckets,
  onChange,
  disabled,
}: {
  chosen: number[];
  buckets: StorageBucket[] | undefined;
  onChange: (ids: number[]) => void;
  disabled: boolean;
}) {
  const hintId = useId();
  return (
    <fieldset className="fieldset key-limit" disabled={disabled} aria-describedby={hintId}>
      <legend className="field-label">Buckets</legend>
      <p className="field-hint" id={hintId}>
        {chosen.length === 0 ? 'None chosen: every bucket, also ones made later.' : 'Only these; any other bucket is “not found” for the key.'}
      </p>
      {buckets === undefined ? (
        <p className="muted small">Loading buckets…</p>
      ) : buckets.length === 0 ? (
        <p className="muted small">No buckets yet, so the key will work with every bucket.</p>
      ) : (
        <div className="check-list">
          {buckets.map((bucket) => (
            <label key={bucket.id} className="check">
              <input type="checkbox" checked={chosen.includes(bucket.id)} onChange={(e) => onChange(toggle(chosen, bucket.id, e.target.checked))} />
              <span>{bucket.name}</span>
            </label>
          ))}
        </div>
      )}
    </fieldset>
  );
}

function PermissionChoice({
  chosen,
  onChange,
  problem,
  disabled,
}: {
  chosen: Permission[];
  onChange: (permissions: Permission[]) => void;
  problem: string | undefined;
  disabled: boolean;
}) {
  const hintIds = useId();
  return (
    <fieldset className="fieldset key-limit" disabled={disabled}>
      <legend className="field-label">Permissions</legend>
      <div className="check-list">
        {ALL_PERMISSIONS.map((permission) => (
          <label key={permission} className="check">
            {/* Named by the permission alone; what it allows is its description. */}
            <input
              type="checkbox"
              aria-label={permission}
              aria-describedby={`${hintIds}-${permission}`}
              checked={chosen.includes(permission)}
              onChange={(e) => onChange(toggle(chosen, permission, e.target.checked))}
            />
            <span>
              <span className="check-title">{permission}</span>{' '}
              <span className="check-hint" id={`${hintIds}-${permission}`}>
                {PERMISSION_HINTS[permission]}
              </span>
            </span>
          </label>
        ))}
      </div>
      {problem ? (
        <p className="field-error" role="alert">
          <Icon name="alert" size={14} /> {problem}
        </p>
      ) : null}
    </fieldset>
  );
}

const EXPIRY_KINDS: { id: ExpiryKind; label: string }[] = [
  { id: 'never', label: 'Never' },
  { id: 'days', label: 'After a number of days' },
  { id: 'date', label: 'At the end of a date' },
];

function ExpiryChoice({
  value,
  onChange,
  problem,
  disabled,
}: {
  value: KeyLimits;
  onChange: (patch: Partial<KeyLimits>) => void;
  problem: string | undefined;
  disabled: boolean;
}) {
  const name = useId();
  const today = new Date();
  const todayValue = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
  return (
    <fieldset className="fieldset key-limit" disabled={disabled}>
      <legend className="field-label">Expires</legend>
      <div className="check-list">
        {EXPIRY_KINDS.map((kind) => (
          <label key={kind.id} className="check">
            <input type="radio" name={name} value={kind.id} checked={value.expiry === kind.id} onChange={() => onChange({ expiry: kind.id })} />
            <span>{kind.label}</span>
          </label>
        ))}
      </div>
      {value.expiry === 'days' ? (
        <label className="inline-input">
          <span className="sr-only">Days until the key expires</span>
          <input
            className="input input-short"
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={value.days}
            aria-invalid={problem ? true : undefined}
            onChange={(e) => onChange({ days: e.target.value })}
          />
          <span aria-hidden="true">days</span>
        </label>
      ) : null}
      {value.expiry === 'date' ? (
        <label className="inline-input">
          <span className="sr-only">Last day the key works</span>
          <input
            className="input"
            type="date"
            min={todayValue}
            value={value.date}
            aria-invalid={problem ? true : undefined}
            onChange={(e) => onChange({ date: e.target.value })}
          />
        </label>
      ) : null}
      {problem ? (
        <p className="field-error" role="alert">
          <Icon name="alert" size={14} /> {problem}
        </p>
      ) : null}
    </fieldset>
  );
}
