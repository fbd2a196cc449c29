/**
 * A file's details in a side panel (the whole screen on a phone), in three
 * tabs. Details: size, type, ETag, times and URL, then what can be edited
 * without touching the bytes: its metadata (`x-amz-meta-*` on S3) and stored
 * headers, saved together by `PATCH …/files/<file>`. Tags (file-tags.tsx),
 * Versions (file-versions.tsx) and, in a bucket with object lock, Lock
 * (file-lock.tsx), each saved on its own.
 */
import { useState } from 'react';
import type { BucketObject, EditFile, FileDetails } from '@pail/shared';
import { editFile, getFileDetails } from '../api/file-ops';
import { useAsync } from '../hooks/use-async';
import { useToast } from '../hooks/toast';
import { baseName } from '../lib/folders';
import { describeType, formatBytes, formatDateTime } from '../lib/format';
import { CopyButton } from './copy-button';
import { FileTagsEditor } from './file-tags';
import { FileLockPanel } from './file-lock';
import { FileVersionsList } from './file-versions';
import { Tabs } from './tabs';
import { Dialog } from './dialog';
import { Icon } from './icons';
import { ErrorState, InlineError, Loading, Spinner } from './states';
import { draftOf, draftProblem, editOf, HEADER_FIELDS, type Draft } from './file-details-draft';
import '../styles/file-operations.css';

interface Props {
  bucketId: number;
  /** The bucket was made with object lock: the panel has a Lock tab. */
  objectLock: boolean;
  object: BucketObject | null;
  onClose: () => void;
  /** After a save (the type shows in the list). */
  onChanged: () => void;
}

export function FileDetailsPanel({ bucketId, objectLock, object, onClose, onChanged }: Props) {
  const filename = object?.filename ?? null;
  const details = useAsync(async (signal) => (filename === null ? null : getFileDetails(bucketId, filename, signal)), [bucketId, filename]);
  const [tab, setTab] = useState('details');
  const data = details.data;
  return (
    <Dialog
      open={object !== null}
      title={object ? baseName(object.filename) : 'Details'}
      onClose={() => {
        setTab('details');
        onClose();
      }}
      size="sheet"
    >
      {details.loading && !data ? (
        <Loading label="Loading the details…" />
      ) : details.error && !data ? (
        <ErrorState title="Could not load the details" error={details.error} onRetry={details.reload} />
      ) : data ? (
        <Tabs
          label="File details"
          selected={tab}
          onSelect={setTab}
          tabs={[
            {
              id: 'details',
              label: 'Details',
              content: (
                <DetailsBody
                  key={`${data.filename} ${data.etag} ${data.updated_at}`}
                  details={data}
                  onSaved={(saved) => {
                    details.setData(() => saved);
                    onChanged();
                  }}
                  save={(edit) => editFile(bucketId, data.filename, edit)}
                />
              ),
            },
            {
              id: 'tags',
              label: 'Tags',
              content: (
                <FileTagsEditor
                  key={`${data.filename} ${data.etag} ${data.updated_at}`}
                  bucketId={bucketId}
                  filename={data.filename}
                  tags={data.tags}
                  onSaved={(tags) => details.setData((d) => (d ? { ...d, tags } : d))}
                />
              ),
            },
            {
              id: 'versions',
              label: 'Versions',
              content: (
                <FileVersionsList
                  bucketId={bucketId}
                  filename={data.filename}
                  onRestored={() => {
                    details.reload();
                    onChanged();
                  }}
                />
              ),
            },
            ...(objectLock
              ? [
                  {
                    id: 'lock',
                    label: 'Lock',
                    content: (
                      <FileLockPanel
                        key={`${data.filename} ${data.etag}`}
                        bucketId={bucketId}
                        filename={data.filename}
                        lock={{ retention: data.retention, legal_hold: data.legal_hold }}
                        onSaved={(lock) => details.setData((d) => (d ? { ...d, ...lock } : d))}
                      />
                    ),
                  },
                ]
              : []),
          ]}
        />
      ) : null}
    </Dialog>
  );
}

function DetailsBody({
  details,
  save,
  onSaved,
}: {
  details: FileDetails;
  save: (edit: EditFile) => Promise<FileDetails>;
  onSaved: (saved: FileDetails) => void;
}) {
  const { notify } = useToast();
  const [draft, setDraft] = useState<Draft>(() => draftOf(details));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const edit = editOf(details, draft);
  const problem = draftProblem(draft);

  const submit = async () => {
    if (!edit || problem) return;
    setBusy(true);
    setError(null);
    try {
      const saved = await save(edit);
      setDraft(draftOf(saved));
      onSaved(saved);
      notify('Details saved');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const setRow = (index: number, change: Partial<Draft['metadata'][number]>) =>
    setDraft((d) => ({ ...d, metadata: d.metadata.map((row, i) => (i === index ? { ...row, ...change } : row)) }));

  return (
    <form
      className="file-details"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <dl className="details-list">
        <dt>Name</dt>
        <dd className="details-wrap">{details.filename}</dd>
        <dt>Size</dt>
        <dd>
          {formatBytes(details.size)}
          {details.size >= 1024 ? <span className="muted"> ({details.size.toLocaleString()} bytes)</span> : null}
        </dd>
        <dt>Type</dt>
        <dd>
          {describeType(details.content_type)} <span className="muted">({details.content_type})</span>
        </dd>
        <dt>ETag</dt>
        <dd className="details-mono details-wrap" data-testid="details-etag">
          {details.etag}
        </dd>
        <dt>Created</dt>
        <dd>
          <time dateTime={details.created_at}>{formatDateTime(details.created_at)}</time>
        </dd>
        <dt>Modified</dt>
        <dd>
          <time dateTime={details.updated_at}>{formatDateTime(details.updated_at)}</time>
        </dd>
        <dt>URL</dt>
        <dd className="details-url">
          <span className="details-mono details-wrap">{details.url}</span>
          <CopyButton text={details.url} label="Copy URL" className="btn btn-ghost btn-small" />
        </dd>
      </dl>

      <fieldset className="details-section">
        <legend>Metadata</legend>
        <p className="field-hint">Your own name and value pairs, sent with the file as x-amz-meta-&lt;name&gt; headers on S3.</p>
        {draft.metadata.length === 0 ? <p className="muted">None.</p> : null}
        {draft.metadata.map((row, index) => (
          <div className="meta-row" key={row.key}>
            <input
              className="input"
              aria-label={`Metadata name ${index + 1}`}
              placeholder="name"
              value={row.name}
              spellCheck={false}
              autoComplete="off"
              onChange={(event) => setRow(index, { name: event.target.value })}
            />
            <input
              className="input"
              aria-label={`Metadata value ${index + 1}`}
              placeholder="value"
              value={row.value}
              spellCheck={false}
              autoComplete="off"
              onChange={(event) => setRow(index, { value: event.target.value })}
            />
            <button
              type="button"
              className="btn btn-ghost btn-icon btn-danger-ghost"
              aria-label={`Remove metadata ${row.name || index + 1}`}
              title="Remove"
              onClick={() => setDraft((d) => ({ ...d, metadata: d.metadata.filter((_, i) => i !== index) }))}
            >
              <Icon name="x" />
            </button>
          </div>
        ))}
        <button
          type="button"
          className="btn btn-ghost btn-small"
          onClick={() => setDraft((d) => ({ ...d, metadata: [...d.metadata, { key: d.nextKey, name: '', value: '' }], nextKey: d.nextKey + 1 }))}
        >
          <Icon name="plus" size={16} /> Add metadata
        </button>
      </fieldset>

      <fieldset className="details-section">
        <legend>Headers</legend>
        <p className="field-hint">Sent with every download of the file. Leave one empty to remove it.</p>
        {HEADER_FIELDS.map(({ field, label, placeholder }) => (
          <div className="field" key={field}>
            <label className="field-label" htmlFor={`details-${field}`}>
              {label}
            </label>
            <input
              id={`details-${field}`}
              className="input"
              value={draft.headers[field]}
              placeholder={placeholder}
              spellCheck={false}
              autoComplete="off"
              onChange={(event) => setDraft((d) => ({ ...d, headers: { ...d.headers, [field]: event.target.value } }))}
            />
          </div>
        ))}
      </fieldset>

      <div className="details-save">
        {problem ? <InlineError>{problem}</InlineError> : null}
        {error ? <InlineError>{error}</InlineError> : null}
        <div className="details-save-buttons">
          <button type="button" className="btn btn-secondary" disabled={busy || !edit} onClick={() => setDraft(draftOf(details))}>
            Undo changes
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || !edit || problem !== null}>
            {busy ? <Spinner size={16} /> : null}
            Save changes
          </button>
        </div>
      </div>
    </form>
  );
}
