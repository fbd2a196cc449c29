/**
 * PDFs, video and audio shown by the browser itself from the file's own URL
 * (same origin, so the session reaches private files; the dashboard's
 * Content-Security-Policy allows frames and media from 'self' only). The
 * file server answers ranges, so the player seeks without loading it all.
 */
import { useState } from 'react';
import { Icon } from '../../components/icons';
import { describeType } from '../../lib/format';

export function PdfPreview({ url, name }: { url: string; name: string }) {
  // False only when the user told the browser to download PDFs rather than show them.
  if (navigator.pdfViewerEnabled === false) {
    return (
      <p className="preview-message">
        <Icon name="file" size={28} />
        Your browser is set to download PDFs instead of showing them. Download the file to read it.
      </p>
    );
  }
  return <iframe className="preview-pdf" src={url} title={`Preview of ${name}`} />;
}

export function MediaPreview({ kind, url, name, type }: { kind: 'video' | 'audio'; url: string; name: string; type: string }) {
  const [failed, setFailed] = useState(false);
  if (failed) {
    return (
      <p className="preview-message">
        <Icon name="file" size={28} />
        This browser cannot play {describeType(type)} files. Download it to play it.
      </p>
    );
  }
  const label = `Preview of ${name}`;
  return kind === 'video' ? (
    <video className="preview-video" src={url} controls preload="metadata" aria-label={label} onError={() => setFailed(true)} />
  ) : (
    <audio className="preview-audio" src={url} controls preload="metadata" aria-label={label} onError={() => setFailed(true)} />
  );
}
