import type { BucketObject } from '@pail/shared';
import { fileApiPath } from '../../api/http';
import { CopyButton } from '../../components/copy-button';
import { Icon } from '../../components/icons';
import { describeType, formatBytes, formatDateTime } from '../../lib/format';
import { previewKind } from '../../lib/preview';

interface Props {
  bucketId: number;
  objects: BucketObject[];
  onPreview: (object: BucketObject) => void;
  onDelete: (object: BucketObject) => void;
}

export function FileTable({ bucketId, objects, onPreview, onDelete }: Props) {
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
        {objects.map((object) => {
          const canPreview = previewKind(object.content_type, object.filename) !== null;
          return (
            <tr key={object.id}>
              <th scope="row" className="cell-name">
                <button
                  type="button"
                  className="row-link file-name"
                  onClick={() => onPreview(object)}
                  aria-label={`${canPreview ? 'Preview' : 'Details of'} ${object.filename}`}
                >
                  <Icon name={canPreview ? 'eye' : 'file'} />
                  <span>{object.filename}</span>
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
                    download={object.filename}
                    aria-label={`Download ${object.filename}`}
                    title="Download"
                  >
                    <Icon name="download" />
                  </a>
                  <CopyButton text={object.url} label={`Copy URL of ${object.filename}`} className="btn btn-ghost" />
                  <button
                    type="button"
                    className="btn btn-ghost btn-icon btn-danger-ghost"
                    aria-label={`Delete ${object.filename}`}
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
