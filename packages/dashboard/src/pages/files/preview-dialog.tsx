import type { BucketObject } from '@pail/shared';
import { fileApiPath } from '../../api/http';
import { CopyButton } from '../../components/copy-button';
import { Dialog } from '../../components/dialog';
import { Icon } from '../../components/icons';
import { ErrorState, Loading } from '../../components/states';
import { useFilePreview } from '../../hooks/use-object-url';
import { describeType, formatBytes, formatDateTime } from '../../lib/format';
import { PREVIEW_LIMITS, previewKind, streamsFromUrl } from '../../lib/preview';
import { MediaPreview, PdfPreview } from './media-preview';

interface Props {
  object: BucketObject | null;
  bucketId: number;
  isPublic: boolean;
  onClose: () => void;
}

export function PreviewDialog({ object, bucketId, isPublic, onClose }: Props) {
  const kind = object ? previewKind(object.content_type, object.filename) : null;
  const limit = kind === null ? undefined : PREVIEW_LIMITS[kind];
  const tooBig = object !== null && limit !== undefined && object.size > limit;
  const shouldLoad = object !== null && kind !== null && !tooBig && !streamsFromUrl(kind);
  const preview = useFilePreview(bucketId, shouldLoad ? object.filename : null, kind === 'text');

  return (
    <Dialog
      open={object !== null}
      title={object?.filename ?? 'Preview'}
      onClose={onClose}
      size="large"
      footer={
        object ? (
          <a className="btn btn-primary" href={fileApiPath(bucketId, object.filename)} download={object.filename}>
            <Icon name="download" /> Download
          </a>
        ) : null
      }
    >
      {object ? (
        <div className="preview">
          <div className="preview-stage">
            {kind === null ? (
              <p className="preview-message">
                <Icon name="file" size={28} />
                No preview for {describeType(object.content_type)} files. Download it to open it.
              </p>
            ) : tooBig ? (
              <p className="preview-message">
                <Icon name="file" size={28} />
                This file is too large to preview ({formatBytes(object.size)}). Download it instead.
              </p>
            ) : kind === 'pdf' ? (
              <PdfPreview url={fileApiPath(bucketId, object.filename)} name={object.filename} />
            ) : kind === 'video' || kind === 'audio' ? (
              <MediaPreview kind={kind} url={fileApiPath(bucketId, object.filename)} name={object.filename} type={object.content_type} />
            ) : preview.loading ? (
              <Loading label="Loading preview…" />
            ) : preview.error ? (
              <ErrorState title="Preview failed" error={new Error(preview.error)} />
            ) : preview.value?.kind === 'text' ? (
              <>
                <pre className="preview-text" tabIndex={0} aria-label={`Contents of ${object.filename}`}>
                  {preview.value.text}
                </pre>
                {preview.value.truncated ? <p className="muted small">Showing the beginning of the file.</p> : null}
              </>
            ) : preview.value?.kind === 'blob' && kind === 'image' ? (
              <img className="preview-image" src={preview.value.url} alt={`Preview of ${object.filename}`} />
            ) : null}
          </div>
          <dl className="details">
            <div>
              <dt>Size</dt>
              <dd>{formatBytes(object.size)}</dd>
            </div>
            <div>
              <dt>Type</dt>
              <dd>{object.content_type}</dd>
            </div>
            <div>
              <dt>Uploaded</dt>
              <dd>{formatDateTime(object.created_at)}</dd>
            </div>
            <div className="details-wide">
              <dt>URL</dt>
              <dd className="url-line">
                <code className="url-text">{object.url}</code>
                <CopyButton text={object.url} label={`Copy URL of ${object.filename}`} />
              </dd>
            </div>
          </dl>
          <p className="muted small">
            {isPublic
              ? 'This bucket is public: anyone with the URL can download the file.'
              : 'This bucket is private: the URL works only with your session or an API key.'}
          </p>
        </div>
      ) : null}
    </Dialog>
  );
}
