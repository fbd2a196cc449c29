/**
 * A file's object lock in its details panel (buckets made with object lock,
 * decisions.md "Object lock"): its retention and legal hold as they are, a
 * retention set or moved later, and the legal hold put on or lifted. What
 * the server refuses (a COMPLIANCE date moved earlier, a GOVERNANCE one
 * without the bypass) is shown as it says it.
 */
import '../styles/history.css';
import { useState } from 'react';
import type { FileLock, RetentionMode } from '@pail/shared';
import { setLegalHold, setRetention } from '../api/history';
import { useToast } from '../hooks/toast';
import { formatDateTime } from '../lib/format';
import { Switch } from './switch';
import { InlineError, Spinner } from './states';

const MODE_HINTS: Record<RetentionMode, string> = {
  GOVERNANCE: 'This version cannot be removed for good before the date, except by a key with the bypass-governance permission that asks to.',
  COMPLIANCE: 'Nobody can remove this version before the date, and the date can only move later. This cannot be undone.',
};

/** A date input's value (yyyy-mm-dd) for a time: a day after now when there is none yet. */
const dayOf = (iso: string | null): string => (iso ?? new Date(Date.now() + 86_400_000).toISOString()).slice(0, 10);

interface Props {
  bucketId: number;
  filename: string;
  lock: FileLock;
  onSaved: (lock: FileLock) => void;
}

export function FileLockPanel({ bucketId, filename, lock, onSaved }: Props) {
  const { notify } = useToast();
  // When the panel opened: a retention whose date has passed by then holds nothing any more.
  const [openedAt] = useState(() => Date.now());
  const held = lock.retention !== null && Date.parse(lock.retention.retain_until) > openedAt;
  const [mode, setMode] = useState<RetentionMode>(lock.retention?.mode ?? 'GOVERNANCE');
  const [until, setUntil] = useState(() => dayOf(lock.retention?.retain_until ?? null));
  const [busy, setBusy] = useState<'retention' | 'hold' | null>(null);
  const [error, setError] = useState<string | null>(null);

  const run = async (what: 'retention' | 'hold', change: () => Promise<FileLock>, done: string) => {
    setBusy(what);
    setError(null);
    try {
      onSaved(await change());
      notify(done);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };
  // The end of the chosen day (UTC), so "until 2030-01-01" keeps the file through that day.
  const untilIso = `${until}T23:59:59.000Z`;

  return (
    <div className="file-lock">
      <p className="field-hint">
        Deleting the file still works: it goes to the trash behind a delete marker, and this version stays, restorable, until its lock lets go.
      </p>
      <dl className="details-list">
        <dt>Retention</dt>
        <dd data-testid="lock-retention">
          {lock.retention === null
            ? 'None'
            : `${lock.retention.mode === 'COMPLIANCE' ? 'Compliance' : 'Governance'} until ${formatDateTime(lock.retention.retain_until)}${held ? '' : ' (ended)'}`}
        </dd>
        <dt>Legal hold</dt>
        <dd data-testid="lock-legal-hold">{lock.legal_hold ? 'On: kept until the hold is lifted' : 'Off'}</dd>
      </dl>

      <form
        className="details-section"
        onSubmit={(event) => {
          event.preventDefault();
          void run('retention', () => setRetention(bucketId, filename, mode, untilIso), `Kept until ${until}`);
        }}
      >
        <fieldset className="fieldset">
          <legend className="field-label">{lock.retention === null ? 'Set a retention' : 'Extend the retention'}</legend>
          <div className="choice-group">
            {(['GOVERNANCE', 'COMPLIANCE'] as const).map((option) => (
              <label key={option} className={`choice${mode === option ? ' choice-selected' : ''}`}>
                <input type="radio" name="retention-mode" value={option} checked={mode === option} onChange={() => setMode(option)} />
                <span className="choice-text">
                  <span className="choice-title">{option === 'COMPLIANCE' ? 'Compliance' : 'Governance'}</span>
                  <span className="choice-hint">{MODE_HINTS[option]}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        <div className="field">
          <label className="field-label" htmlFor="lock-until">
            Keep until (the end of this day, UTC)
          </label>
          <input id="lock-until" className="input" type="date" value={until} required onChange={(event) => setUntil(event.target.value)} />
        </div>
        <button type="submit" className="btn btn-primary" disabled={busy !== null || until === ''}>
          {busy === 'retention' ? <Spinner size={16} /> : null}
          {lock.retention === null ? 'Set retention' : 'Save retention'}
        </button>
      </form>

      <div className="details-section">
        <Switch
          checked={lock.legal_hold}
          label="Legal hold"
          text={lock.legal_hold ? 'Legal hold on' : 'Legal hold off'}
          disabled={busy !== null}
          onChange={(on) => void run('hold', () => setLegalHold(bucketId, filename, on), on ? 'Legal hold on' : 'Legal hold lifted')}
        />
        <p className="field-hint">While on, nobody can remove this version for good, whatever its retention.</p>
      </div>
      {error ? <InlineError>{error}</InlineError> : null}
    </div>
  );
}
