import type { BucketObject } from '@pail/shared';
import { fileApiPath } from '../../api/http';
import { CopyButton } from '../../components/copy-button';
import { Icon } from '../../components/icons';
import { Link } from '../../components/link';
import { baseName, folderName, folderPagePath, nameInFolder } from '../../lib/folders';
import { describeType, formatBytes, formatDateTime } from '../../lib/format';
import { previewKind } from '../../lib/preview';

interface Props {
  bucketId: number;
  /** The folder shown (`''` at the top): names are shown relative to it. */
  folder: string;
  /** Folders directly under `folder`, as full prefixes ending in `/`. */
  folders: string[];
  objects: BucketObject[];
  onPreview: (object: BucketObject) => void;
  onShare: (object: BucketObject) => void;
  onDelete: (object: BucketObject) => void;
}

export function FileTable({ bucketId, folder, folders, objects, onPreview, onShare, onDelete }: Props) {
  return (
    <table className="table table-responsive">
      <caption className="sr-only">Files</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col" className="num">
            Size
          </th>
          <th scope="col">Type</th>
          <th scope="col">Uploaded</th>
          <th scope="col">
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {folders.map((prefix) => (
          <FolderRow key={`folder:${prefix}`} bucketId={bucketId} prefix={prefix} name={folderName(prefix, folder)} />
        ))}
        {objects.map((object) => {
          const name = nameInFolder(object.filename, folder);
          const canPreview = previewKind(object.content_type, object.filename) !== null;
          return (
            <tr key={object.id}>
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
              <td data-label="Uploaded">
                <time dateTime={object.created_at}>{formatDateTime(object.created_at)}</time>
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
function FolderRow({ bucketId, prefix, name }: { bucketId: number; prefix: string; name: string }) {
  return (
    <tr className="folder-row">
      <th scope="row" className="cell-name">
        <Link to={folderPagePath(bucketId, prefix)} className="row-link" aria-label={`Open folder ${name}`} title={prefix}>
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
      <td data-label="Uploaded" className="muted">
        —
      </td>
      <td className="cell-actions" />
    </tr>
  );
}
