/**
 * The uploads, in a small tray in the bottom corner of every page: the list
 * scrolls inside it and collapses to its header, so a drop of many files never
 * pushes the file list off the screen. Finished items can be cleared; a
 * refused file says why and offers no retry that could not succeed.
 */
import { useEffect, useRef, useState } from 'react';
import { isFinished, isRunning, useUploadQueue, type UploadItem } from '../hooks/upload-queue';
import { formatBytes, formatDuration, formatPercent, formatSpeed } from '../lib/format';
import { Icon } from './icons';
import { ProgressBar } from './progress-bar';
import { UnfinishedUploads } from './unfinished-uploads';
import '../styles/upload-tray.css';

/** Keeps "128.3 KiB/s" or "3 s left" on one line when the status wraps. */
const keep = (text: string) => text.replace(/ /g, '\u00a0');

function statusLine(item: UploadItem): string {
  switch (item.status) {
    case 'queued':
      return `Waiting · ${keep(formatBytes(item.size))}`;
    case 'uploading': {
      if (item.reconnecting) return `Connection lost · trying again · ${keep(`${formatBytes(item.loaded)} of ${formatBytes(item.size)}`)}`;
      const remaining = item.speed > 0 ? (item.size - item.loaded) / item.speed : NaN;
      const eta = formatDuration(remaining);
      return [keep(`${formatBytes(item.loaded)} of ${formatBytes(item.size)}`), keep(formatSpeed(item.speed)), eta ? keep(`${eta} left`) : null]
        .filter(Boolean)
        .join(' · ');
    }
    case 'paused':
      return `Paused · ${keep(`${formatBytes(item.loaded)} of ${formatBytes(item.size)}`)}`;
    case 'processing':
      return `${keep(formatBytes(item.size))} sent · finishing…`;
    case 'done':
      return `${item.result?.updated ? 'Replaced' : 'Uploaded'} · ${keep(formatBytes(item.size))}`;
    case 'cancelled':
      return 'Cancelled';
    case 'error':
      return 'Failed';
  }
}

function hint(item: UploadItem): string | null {
  if (item.errorKind === 'storage-cap') return 'Delete files you no longer need, or ask the operator for a larger plan.';
  if (item.errorKind === 'file-cap' && !/limit of/.test(item.error ?? '')) return 'This file is larger than the server allows for a single file.';
  return null;
}

const ICON: Record<UploadItem['status'], 'check' | 'alert' | 'x' | 'upload'> = {
  queued: 'upload',
  uploading: 'upload',
  paused: 'upload',
  processing: 'upload',
  done: 'check',
  error: 'alert',
  cancelled: 'x',
};

function TrayItem({ item }: { item: UploadItem }) {
  const { cancel, retry, pause, resume } = useUploadQueue();
  const fraction = item.size > 0 ? item.loaded / item.size : item.status === 'done' ? 1 : 0;
  const tone =
    item.status === 'done' ? 'success' : item.status === 'error' ? 'danger' : item.status === 'cancelled' || item.status === 'paused' ? 'warning' : 'default';
  const extra = hint(item);
  const button = (label: string, action: () => void, text: string) => (
    <button type="button" className="btn btn-ghost btn-small" aria-label={`${label} upload of ${item.name}`} onClick={action}>
      {text}
    </button>
  );
  return (
    <li className={`upload upload-${item.status}`} aria-label={item.name} data-status={item.status}>
      <div className="upload-main">
        <div className="upload-top">
          <span className="upload-name" title={`${item.bucketName}/${item.name}`}>
            <Icon name={ICON[item.status]} size={14} className="upload-state-icon" /> {item.name}
          </span>
          <span className="upload-percent">
            {item.status === 'error' || item.status === 'cancelled' ? '' : formatPercent(item.status === 'done' ? 1 : fraction)}
          </span>
        </div>
        {isFinished(item) && item.status !== 'done' ? null : (
          <ProgressBar
            value={item.status === 'done' ? 1 : fraction}
            max={1}
            label={`Upload of ${item.name}`}
            valueText={statusLine(item)}
            tone={tone}
            indeterminate={item.status === 'processing'}
          />
        )}
        <div className="upload-status" aria-live={item.status === 'error' ? 'assertive' : 'off'}>
          {item.status === 'error' ? (
            <span className="upload-error" role="alert">
              {item.error}
              {extra ? <span className="upload-hint"> {extra}</span> : null}
            </span>
          ) : (
            statusLine(item)
          )}
        </div>
      </div>
      <div className="upload-actions">
        {item.resumable && item.status === 'uploading' ? button('Pause', () => pause(item.id), 'Pause') : null}
        {item.status === 'paused' ? button('Resume', () => resume(item.id), 'Resume') : null}
        {item.status === 'queued' || item.status === 'uploading' || item.status === 'paused' || item.status === 'processing'
          ? button('Cancel', () => cancel(item.id), 'Cancel')
          : null}
        {(item.status === 'error' || item.status === 'cancelled') && item.retryable ? button('Retry', () => retry(item.id), 'Retry') : null}
      </div>
    </li>
  );
}

export function UploadTray() {
  const { items, clearFinished, unfinished } = useUploadQueue();
  const [collapsed, setCollapsed] = useState(false);
  // New files open the tray again, so the user sees them start (or be refused).
  const count = useRef(items.length);
  useEffect(() => {
    if (items.length > count.current) setCollapsed(false);
    count.current = items.length;
  }, [items.length]);

  const done = items.filter((i) => i.status === 'done').length;
  const failed = items.filter((i) => i.status === 'error').length;
  const finished = items.filter(isFinished).length;
  // Once the last upload lands, the tray folds to its one-line summary, out of the way. Not
  // when one failed or was cancelled: the user has a reason to read, and perhaps a Retry to press.
  const running = items.some((i) => isRunning(i) || i.status === 'paused');
  const allDone = items.length > 0 && done === items.length && unfinished.length === 0;
  const wasRunning = useRef(running);
  useEffect(() => {
    if (wasRunning.current && !running && allDone) setCollapsed(true);
    wasRunning.current = running;
  }, [running, allDone]);

  if (items.length === 0 && unfinished.length === 0) return null;

  return (
    <section className={`upload-tray${collapsed ? ' upload-tray-collapsed' : ''}`} aria-labelledby="upload-tray-title">
      <header className="upload-tray-header">
        <h2 id="upload-tray-title" className="upload-tray-title">
          {items.length > 0 ? (
            <>
              Uploads{' '}
              <span className="muted">
                ({done} of {items.length} done)
              </span>
            </>
          ) : (
            'Unfinished uploads'
          )}
        </h2>
        {failed > 0 ? <span className="upload-tray-failed">{failed} failed</span> : null}
        {finished > 0 ? (
          <button type="button" className="btn btn-ghost btn-small" aria-label="Clear finished uploads" title="Clear finished uploads" onClick={clearFinished}>
            Clear
          </button>
        ) : null}
        <button
          type="button"
          className="btn btn-icon btn-ghost btn-small"
          aria-expanded={!collapsed}
          aria-controls="upload-tray-list"
          aria-label={collapsed ? 'Show uploads' : 'Hide uploads'}
          onClick={() => setCollapsed((c) => !c)}
        >
          <Icon name={collapsed ? 'chevronUp' : 'chevronDown'} />
        </button>
      </header>
      {collapsed ? null : <UnfinishedUploads uploads={unfinished} />}
      {collapsed || items.length === 0 ? null : (
        <ul id="upload-tray-list" className="upload-list upload-tray-list" aria-label="Upload progress">
          {items.map((item) => (
            <TrayItem key={item.id} item={item} />
          ))}
        </ul>
      )}
    </section>
  );
}
