import { useRef, useState, type DragEvent, type ReactNode, type Ref } from 'react';
import { Icon } from '../../components/icons';

interface Props {
  onFiles: (files: File[]) => void;
  children: ReactNode;
  /** Where dropped files go, as shown: `photos` or `photos/2026/`. */
  target: string;
}

function hasFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}

/** Wraps the file area: files dropped anywhere on it are uploaded. */
export function DropZone({ onFiles, children, target }: Props) {
  const [over, setOver] = useState(false);
  const depth = useRef(0);

  return (
    <div
      className={`dropzone${over ? ' dropzone-over' : ''}`}
      onDragEnter={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        depth.current += 1;
        setOver(true);
      }}
      onDragOver={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'copy';
      }}
      onDragLeave={() => {
        depth.current = Math.max(0, depth.current - 1);
        if (depth.current === 0) setOver(false);
      }}
      onDrop={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        depth.current = 0;
        setOver(false);
        const files = Array.from(event.dataTransfer.files);
        if (files.length > 0) onFiles(files);
      }}
    >
      {children}
      {over ? (
        <div className="dropzone-overlay" aria-hidden="true">
          <Icon name="upload" size={32} />
          <span>Drop to upload to {target}</span>
        </div>
      ) : null}
    </div>
  );
}

/**
 * The one <input type=file> of the page, visually hidden; visible buttons call
 * click() on it so the picker opens from the keyboard too.
 */
export function HiddenFileInput({ ref, onFiles }: { ref: Ref<HTMLInputElement>; onFiles: (files: File[]) => void }) {
  return (
    <input
      ref={ref}
      type="file"
      multiple
      className="sr-only"
      tabIndex={-1}
      aria-label="Choose files to upload"
      onChange={(event) => {
        const files = Array.from(event.target.files ?? []);
        if (files.length > 0) onFiles(files);
        event.target.value = '';
      }}
    />
  );
}
