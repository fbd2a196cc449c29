/**
 * The actions of a row beyond the ones shown as buttons: for a file, details,
 * rename and move; for a folder, download as a zip and delete (as buttons,
 * like a file's) and rename and move.
 */
import type { BucketObject } from '@pail/shared';
import { Icon } from '../../components/icons';
import { RowMenu } from '../../components/row-menu';
import type { Entry } from '../../lib/entries';

export interface EntryActions {
  details: (object: BucketObject) => void;
  rename: (entry: Entry) => void;
  move: (entry: Entry) => void;
  downloadFolder: (folder: string) => void;
  deleteFolder: (folder: string) => void;
}

export function FileMenu({ object, name, actions }: { object: BucketObject; name: string; actions: EntryActions }) {
  const entry: Entry = { kind: 'file', name: object.filename };
  return (
    <RowMenu
      label={`More actions for ${name}`}
      actions={[
        { label: 'Details', icon: 'info', onSelect: () => actions.details(object) },
        { label: 'Rename', icon: 'pencil', onSelect: () => actions.rename(entry) },
        { label: 'Move', icon: 'moveTo', onSelect: () => actions.move(entry) },
      ]}
    />
  );
}

export function FolderActions({ prefix, name, actions }: { prefix: string; name: string; actions: EntryActions }) {
  const entry: Entry = { kind: 'folder', name: prefix };
  return (
    <div className="row-actions">
      <button
        type="button"
        className="btn btn-ghost btn-icon"
        aria-label={`Download ${name} as a zip`}
        title="Download as a zip"
        onClick={() => actions.downloadFolder(prefix)}
      >
        <Icon name="download" />
      </button>
      <button
        type="button"
        className="btn btn-ghost btn-icon btn-danger-ghost"
        aria-label={`Delete folder ${name}`}
        title="Delete the folder and everything in it"
        onClick={() => actions.deleteFolder(prefix)}
      >
        <Icon name="trash" />
      </button>
      <RowMenu
        label={`More actions for folder ${name}`}
        actions={[
          { label: 'Rename', icon: 'pencil', onSelect: () => actions.rename(entry) },
          { label: 'Move', icon: 'moveTo', onSelect: () => actions.move(entry) },
        ]}
      />
    </div>
  );
}
