import type { BucketObject } from '@pail/shared';
import { fileApiPath } from '../../api/http';
import { CopyButton } from '../../components/copy-button';
import { Icon } from '../../components/icons';
import { Link } from '../../components/link';
import type { Selection } from '../../hooks/use-selection';
import type { SortColumn, SortOrder } from '../../lib/browse-view';
import { baseName, folderName, nameInFolder } from '../../lib/folders';
import { describeType, formatBytes, formatDateTime } from '../../lib/format';
import { previewKind } from '../../lib/preview';
import { FileMenu, FolderActions, type EntryActions } from './entry-menu';
import { SelectAllBox, SelectBox } from './select-box';
import { SortHeader } from './sort-header';

interface Props {
  bucketId: number;
  /** The folder shown (`''` at the top): names are shown relative to it. */
  folder: string;
  /** Folders directly under `folder`, as full prefixes ending in `/`. */
  folders: string[];
  objects: BucketObject[];
  sort: SortColumn;
  order: SortOrder;
  onSort: (column: SortColumn, order: SortOrder) => void;
  /** Over the files' names and the folders' prefixes. */
  selection: Selection;
  /** The page a folder opens on (keeping the sort). */
  folderHref: (prefix: string) => string;
  onPreview: (object: BucketObject) => void;
  onShare: (object: BucketObject) => void;
  onDelete: (object: BucketObject) => void;
  /** Rename, move, details; a folder's zip and delete. */
  actions: EntryActions;
}

export function FileTable({ bucketId, folder, folders, objects, sort, order, onSort, selection, folderHref, onPreview, onShare, onDelete, actions }: Props) {
  const sortProps = { sort, order, onSort };
  return (
    <table className="table table-responsive file-table">
      <caption className="sr-only">Files</caption>
      <thead>
        <tr>
          <th scope="col" className="cell-select">
            <SelectAllBox selection={selection} disabled={objects.length + folders.length === 0} />
          </th>
          <SortHeader column="name" label="Name" {...sortProps} />
          <SortHeader column="size" label="Size" className="num" {...sortProps} />
          <SortHeader column="type" label="Type" {...sortProps} />
          <SortHeader column="updated" label="Modified" {...sortProps} />
          <th scope="col">
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {folders.map((prefix) => (
          <FolderRow
            key={`folder:${prefix}`}
            href={folderHref(prefix)}
            prefix={prefix}
            name={folderName(prefix, folder)}
            selection={selection}
            actions={actions}
          />
        ))}
        {objects.map((object) => {
          const name = nameInFolder(object.filename, folder);
          const canPreview = previewKind(object.content_type, object.filename) !== null;
          return (
            <tr key={object.id} className={selection.selected.has(object.filename) ? 'row-selected' : undefined}>
              <td className="cell-select">
                <SelectBox name={name} checked={selection.selected.has(object.filename)} onToggle={(range) => selection.toggle(object.filename, range)} />
              </td>
              <th scope="row" className="cell-name">
                <button
                  type="button"
                  className="row-link file-name"
                  onClick={() => onPreview(object)}
                  aria-label={`${canPreview ? 'Preview' : 'Details of'} ${name}`}
                  title={object.filename}
                >
                  <Icon name={canPreview ? 'eye' : 'file'} />
                  <span>{name}</span>
                </button>
              </th>
              <td data-label="Size" className="num">
                {formatBytes(object.size)}
              </td>
              <td data-label="Type">
                <span className="type" title={object.content_type}>
                  {describeType(object.content_type)}
                </span>
              </td>
              <td data-label="Modified">
                <time dateTime={object.updated_at} title={`Uploaded first ${formatDateTime(object.created_at)}`}>
                  {formatDateTime(object.updated_at)}
                </time>
              </td>
              <td className="cell-actions">
                <div className="row-actions">
                  <a
                    className="btn btn-ghost btn-icon"
                    href={fileApiPath(bucketId, object.filename)}
                    download={baseName(object.filename)}
                    aria-label={`Download ${name}`}
                    title="Download"
                  >
                    <Icon name="download" />
                  </a>
                  <button
                    type="button"
                    className="btn btn-ghost btn-icon"
                    aria-label={`Share ${name}`}
                    title="Share with a link that expires"
                    onClick={() => onShare(object)}
                  >
                    <Icon name="share" />
                  </button>
                  <CopyButton text={object.url} label={`Copy URL of ${name}`} className="btn btn-ghost" />
                  <button
                    type="button"
                    className="btn btn-ghost btn-icon btn-danger-ghost"
                    aria-label={`Delete ${name}`}
                    title="Delete"
                    onClick={() => onDelete(object)}
                  >
                    <Icon name="trash" />
                  </button>
                  <FileMenu object={object} name={name} actions={actions} />
                </div>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A folder opens in place: its page is the bucket's page with `?folder=…`. */
function FolderRow({ href, prefix, name, selection, actions }: { href: string; prefix: string; name: string; selection: Selection; actions: EntryActions }) {
  const selected = selection.selected.has(prefix);
  return (
    <tr className={`folder-row${selected ? ' row-selected' : ''}`}>
      <td className="cell-select">
        <SelectBox name={`folder ${name}`} checked={selected} onToggle={(range) => selection.toggle(prefix, range)} />
      </td>
      <th scope="row" className="cell-name">
        <Link to={href} className="row-link" aria-label={`Open folder ${name}`} title={prefix}>
          <Icon name="folder" />
          <span>{name}/</span>
        </Link>
      </th>
      <td data-label="Size" className="num muted">
        —
      </td>
      <td data-label="Type">
        <span className="type">Folder</span>
      </td>
      <td data-label="Modified" className="muted">
        —
      </td>
      <td className="cell-actions">
        <FolderActions prefix={prefix} name={name} actions={actions} />
      </td>
    </tr>
  );
}
