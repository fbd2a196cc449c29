import { useId, useState } from 'react';
import { Field } from '../../components/field';
import { MAX_LINK_SECONDS, toLocalInput, type CustomKind, type LinkExpiry, type LinkPreset } from './link-expiry';

interface Props {
  value: LinkExpiry;
  onChange: (next: LinkExpiry) => void;
  /** Why the current choice cannot be used, shown under the custom field. */
  problem: string | null;
  disabled?: boolean;
}

const PRESETS: { id: LinkPreset; label: string }[] = [
  { id: 'hour', label: 'An hour' },
  { id: 'day', label: 'A day' },
  { id: 'week', label: 'A week' },
  { id: 'custom', label: 'Custom' },
];

const CUSTOM_KINDS: { id: CustomKind; label: string }[] = [
  { id: 'hours', label: 'Hours from now' },
  { id: 'date', label: 'Until a date' },
];

/** An hour, a day, a week, or a custom lifetime in hours or up to a date and time. */
export function LinkExpiryPicker({ value, onChange, problem, disabled = false }: Props) {
  const name = useId();
  const set = (patch: Partial<LinkExpiry>) => onChange({ ...value, ...patch });
  // Bounds for the date field only (the lifetime itself is measured at the click): when the dialog opened is close enough.
  const [now] = useState(() => Date.now());

  return (
    <fieldset className="fieldset" disabled={disabled}>
      <legend className="field-label">Link works for</legend>
      <div className="segmented">
        {PRESETS.map((preset) => (
          <label key={preset.id} className={`segment${value.preset === preset.id ? ' segment-selected' : ''}`}>
            <input type="radio" name={`${name}-preset`} value={preset.id} checked={value.preset === preset.id} onChange={() => set({ preset: preset.id })} />
            {preset.label}
          </label>
        ))}
      </div>
      {value.preset === 'custom' ? (
        <div className="custom-expiry">
          <div className="segmented segmented-small" role="radiogroup" aria-label="Custom lifetime in">
            {CUSTOM_KINDS.map((kind) => (
              <label key={kind.id} className={`segment${value.customKind === kind.id ? ' segment-selected' : ''}`}>
                <input
                  type="radio"
                  name={`${name}-kind`}
                  value={kind.id}
                  checked={value.customKind === kind.id}
                  onChange={() => set({ customKind: kind.id })}
                />
                {kind.label}
              </label>
            ))}
          </div>
          {value.customKind === 'hours' ? (
            <Field
              label="Hours"
              type="number"
              inputMode="decimal"
              min={0}
              max={MAX_LINK_SECONDS / 3600}
              step="any"
              value={value.hours}
              error={problem}
              hint="Up to 168 hours (7 days)."
              onChange={(e) => set({ hours: e.target.value })}
            />
          ) : (
            <Field
              label="Expires at"
              type="datetime-local"
              min={toLocalInput(now)}
              max={toLocalInput(now + MAX_LINK_SECONDS * 1000)}
              value={value.date}
              error={problem}
              hint="Your local time, at most 7 days from now."
              onChange={(e) => set({ date: e.target.value })}
            />
          )}
        </div>
      ) : null}
    </fieldset>
  );
}
