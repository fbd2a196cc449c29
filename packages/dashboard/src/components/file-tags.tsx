/**
 * A file's tags in its details panel: key and value rows, saved whole by
 * `PUT …/files/<file>/tags`. S3's limits (10 tags, keys up to 128 characters,
 * values up to 256) are checked here to say so at once; the server checks again.
 */
import { useState } from 'react';
import { MAX_FILE_TAGS, MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_LENGTH } from '@pail/shared/names';
import { setTags } from '../api/history';
import { useToast } from '../hooks/toast';
import { Icon } from './icons';
import { InlineError, Spinner } from './states';

interface Row {
  key: number;
  name: string;
  value: string;
}

const rowsOf = (tags: Record<string, string>): Row[] => Object.entries(tags).map(([name, value], key) => ({ key, name, value }));
const characters = (text: string) => [...text].length;

function problemOf(rows: readonly Row[]): string | null {
  const named = rows.filter((row) => row.name !== '' || row.value !== '');
  if (named.length > MAX_FILE_TAGS) return `A file can have at most ${MAX_FILE_TAGS} tags.`;
  const seen = new Set<string>();
  for (const { name, value } of named) {
    if (name.trim() === '') return 'Give every tag a key.';
    if (characters(name) > MAX_TAG_KEY_LENGTH) return `A tag key can be at most ${MAX_TAG_KEY_LENGTH} characters.`;
    if (characters(value) > MAX_TAG_VALUE_LENGTH) return `A tag value can be at most ${MAX_TAG_VALUE_LENGTH} characters.`;
    if (name.toLowerCase().startsWith('aws:')) return 'A tag key cannot start with aws:.';
    if (seen.has(name)) return `The tag key “${name}” is there twice.`;
    seen.add(name);
  }
  return null;
}

const tagsOf = (rows: readonly Row[]) => Object.fromEntries(rows.filter((row) => row.name !== '').map((row) => [row.name, row.value]));

export function FileTagsEditor({
  bucketId,
  filename,
  tags,
  onSaved,
}: {
  bucketId: number;
  filename: string;
  tags: Record<string, string>;
  onSaved: (tags: Record<string, string>) => void;
}) {
  const { notify } = useToast();
  const [rows, setRows] = useState<Row[]>(() => rowsOf(tags));
  const [nextKey, setNextKey] = useState(() => Object.keys(tags).length);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const problem = problemOf(rows);
  const changed = JSON.stringify(tagsOf(rows)) !== JSON.stringify(tags);

  const save = async () => {
    if (problem || !changed) return;
    setBusy(true);
    setError(null);
    try {
      const kept = await setTags(bucketId, filename, tagsOf(rows));
      setRows(rowsOf(kept));
      setNextKey(Object.keys(kept).length);
      onSaved(kept);
      notify('Tags saved');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const setRow = (index: number, change: Partial<Row>) => setRows((all) => all.map((row, i) => (i === index ? { ...row, ...change } : row)));

  return (
    <form
      className="file-details"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <fieldset className="details-section">
        <legend>Tags</legend>
        <p className="field-hint">
          Key and value pairs for finding and sorting files, and for lifecycle rules; S3 reads them as object tags. At most {MAX_FILE_TAGS}.
        </p>
        {rows.length === 0 ? <p className="muted">No tags.</p> : null}
        {rows.map((row, index) => (
          <div className="meta-row" key={row.key}>
            <input
              className="input"
              aria-label={`Tag key ${index + 1}`}
              placeholder="key"
              value={row.name}
              spellCheck={false}
              autoComplete="off"
              onChange={(event) => setRow(index, { name: event.target.value })}
            />
            <input
              className="input"
              aria-label={`Tag value ${index + 1}`}
              placeholder="value"
              value={row.value}
              spellCheck={false}
              autoComplete="off"
              onChange={(event) => setRow(index, { value: event.target.value })}
            />
            <button
              type="button"
              className="btn btn-ghost btn-icon btn-danger-ghost"
              aria-label={`Remove tag ${row.name || index + 1}`}
              title="Remove"
              onClick={() => setRows((all) => all.filter((_, i) => i !== index))}
            >
              <Icon name="x" />
            </button>
          </div>
        ))}
        <button
          type="button"
          className="btn btn-ghost btn-small"
          disabled={rows.length >= MAX_FILE_TAGS}
          onClick={() => {
            setRows((all) => [...all, { key: nextKey, name: '', value: '' }]);
            setNextKey((k) => k + 1);
          }}
        >
          <Icon name="plus" size={16} /> Add tag
        </button>
      </fieldset>
      <div className="details-save">
        {problem ? <InlineError>{problem}</InlineError> : null}
        {error ? <InlineError>{error}</InlineError> : null}
        <div className="details-save-buttons">
          <button type="button" className="btn btn-secondary" disabled={busy || !changed} onClick={() => setRows(rowsOf(tags))}>
            Undo changes
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || !changed || problem !== null}>
            {busy ? <Spinner size={16} /> : null}
            Save tags
          </button>
        </div>
      </div>
    </form>
  );
}
