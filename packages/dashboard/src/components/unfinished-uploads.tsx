/**
 * The tray's list of uploads a reload or a closed tab stopped: a page cannot
 * keep a File, so the user picks the same file again and it goes on from what
 * the server has; or discards it.
 */
import { useRef } from 'react';
import type { UnfinishedUpload } from '../api/resumable';
import { useUploadQueue } from '../hooks/upload-queue';
import { formatBytes, formatPercent } from '../lib/format';
import { ProgressBar } from './progress-bar';

function UnfinishedItem({ upload }: { upload: UnfinishedUpload }) {
  const { continueUnfinished, discardUnfinished } = useUploadQueue();
  const picker = useRef<HTMLInputElement>(null);
  const fraction = upload.size > 0 ? upload.offset / upload.size : 0;
  return (
    <li className="upload upload-paused" aria-label={upload.filename} data-status="unfinished">
      <div className="upload-main">
        <div className="upload-top">
          <span className="upload-name" title={upload.filename}>
            {upload.filename}
          </span>
          <span className="upload-percent">{formatPercent(fraction)}</span>
        </div>
        <ProgressBar value={fraction} max={1} label={`Unfinished upload of ${upload.filename}`} tone="warning" />
        <div className="upload-status">
          Stopped at {formatBytes(upload.offset)} of {formatBytes(upload.size)}. Choose the same file to go on.
        </div>
      </div>
      <div className="upload-actions">
        <input
          ref={picker}
          type="file"
          hidden
          aria-label={`Choose ${upload.filename} again`}
          onChange={(event) => {
            const file = event.target.files?.[0];
            event.target.value = '';
            if (file) void continueUnfinished(upload, file);
          }}
        />
        <button type="button" className="btn btn-ghost btn-small" onClick={() => picker.current?.click()}>
          Choose file
        </button>
        <button type="button" className="btn btn-ghost btn-small" aria-label={`Discard upload of ${upload.filename}`} onClick={() => discardUnfinished(upload)}>
          Discard
        </button>
      </div>
    </li>
  );
}

export function UnfinishedUploads({ uploads }: { uploads: UnfinishedUpload[] }) {
  if (uploads.length === 0) return null;
  return (
    <ul className="upload-list upload-tray-list upload-tray-unfinished" aria-label="Unfinished uploads">
      {uploads.map((upload) => (
        <UnfinishedItem key={upload.key} upload={upload} />
      ))}
    </ul>
  );
}
