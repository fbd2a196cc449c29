/**
 * Where a move goes: one of the owner's buckets, then a folder in it, opened
 * one level at a time as in a file manager; a new folder can be named here and
 * comes into being when the move puts something in it.
 */
import { useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { listBuckets, listFiles } from '../api/buckets';
import { useAsync } from '../hooks/use-async';
import { newNameProblem } from '../lib/entries';
import { crumbsOf, folderName } from '../lib/folders';
import { Icon } from './icons';
import { InlineError, Spinner } from './states';

export interface Destination {
  bucket: StorageBucket;
  folder: string;
}

interface Props {
  value: Destination;
  onChange: (next: Destination) => void;
  /** Folders that cannot be opened as a destination (those being moved: nothing moves into itself). */
  blocked: (folder: string) => boolean;
}

export function FolderPicker({ value, onChange, blocked }: Props) {
  const buckets = useAsync((signal) => listBuckets(signal), []);
  const listing = useAsync(
    (signal) => listFiles(value.bucket.id, { prefix: value.folder, delimiter: '/', limit: 1000 }, signal),
    [value.bucket.id, value.folder],
  );
  const [naming, setNaming] = useState(false);
  const [newName, setNewName] = useState('');
  const crumbs = [{ name: value.bucket.name, folder: '' }, ...crumbsOf(value.folder)];
  const folders = listing.data?.folders ?? [];
  const nameProblem = newName.trim() ? newNameProblem({ kind: 'folder', name: `${value.folder}x/` }, newName) : null;

  const open = (folder: string) => {
    setNaming(false);
    setNewName('');
    onChange({ bucket: value.bucket, folder });
  };

  return (
    <div className="folder-picker">
      <label className="field-label" htmlFor="move-bucket">
        Bucket
      </label>
      <select
        id="move-bucket"
        className="input select"
        value={value.bucket.id}
        onChange={(event) => {
          const bucket = buckets.data?.find((b) => b.id === Number(event.target.value));
          if (bucket) onChange({ bucket, folder: '' });
        }}
      >
        {(buckets.data ?? [value.bucket]).map((bucket) => (
          <option key={bucket.id} value={bucket.id}>
            {bucket.name}
          </option>
        ))}
      </select>

      <nav className="picker-path" aria-label="Destination folder">
        {crumbs.map((crumb, index) => (
          <span key={crumb.folder} className="picker-crumb">
            {index > 0 ? <Icon name="chevronRight" size={14} className="breadcrumb-sep" /> : null}
            {index === crumbs.length - 1 ? (
              <strong aria-current="location">{crumb.name}</strong>
            ) : (
              <button type="button" className="link-button" onClick={() => open(crumb.folder)}>
                {crumb.name}
              </button>
            )}
          </span>
        ))}
      </nav>

      <ul className="picker-list" aria-label="Folders here" aria-busy={listing.refreshing}>
        {listing.loading ? (
          <li className="picker-note">
            <Spinner size={16} /> Loading folders…
          </li>
        ) : listing.error ? (
          <li className="picker-note">
            <InlineError>{listing.error.message}</InlineError>
          </li>
        ) : folders.length === 0 ? (
          <li className="picker-note">No folders here.</li>
        ) : (
          folders.map((folder) => {
            const name = folderName(folder, value.folder);
            const isBlocked = blocked(folder);
            return (
              <li key={folder}>
                <button
                  type="button"
                  className="picker-item"
                  disabled={isBlocked}
                  title={isBlocked ? 'A folder cannot move into itself' : undefined}
                  aria-label={`Open folder ${name}`}
                  onClick={() => open(folder)}
                >
                  <Icon name="folder" size={16} />
                  <span>{name}</span>
                  <Icon name="chevronRight" size={14} className="picker-chevron" />
                </button>
              </li>
            );
          })
        )}
      </ul>
      {listing.data?.next_cursor ? <p className="field-hint">Showing the first folders here; open one by its path above if it is not listed.</p> : null}

      {naming ? (
        <form
          className="picker-new"
          onSubmit={(event) => {
            event.preventDefault();
            if (!newName.trim() || nameProblem) return;
            open(`${value.folder}${newName.trim()}/`);
          }}
        >
          <input
            className="input"
            aria-label="New folder name"
            placeholder="New folder name"
            value={newName}
            autoFocus
            aria-invalid={nameProblem ? true : undefined}
            onChange={(event) => setNewName(event.target.value)}
          />
          <button type="submit" className="btn btn-secondary" disabled={!newName.trim() || nameProblem !== null}>
            Open
          </button>
          {nameProblem ? <InlineError>{nameProblem}</InlineError> : null}
        </form>
      ) : (
        <button type="button" className="btn btn-ghost btn-small" onClick={() => setNaming(true)}>
          <Icon name="folderPlus" size={16} /> New folder here
        </button>
      )}
    </div>
  );
}
