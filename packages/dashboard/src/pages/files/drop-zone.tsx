import { useRef, useState, type DragEvent, type ReactNode, type Ref } from 'react';
import { Icon } from '../../components/icons';
import { droppedEntries, filesOfEntries, pickedFiles, type PickedFile } from '../../lib/dropped-files';

interface Props {
  onFiles: (files: PickedFile[]) => void;
  children: ReactNode;
  /** Where dropped files go, as shown: `photos` or `photos/2026/`. */
  target: string;
}

function hasFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}

/** Wraps the file area: files and folders dropped anywhere on it are uploaded, folders with their tree. */
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
        const entries = droppedEntries(event.dataTransfer);
        const loose = pickedFiles(event.dataTransfer.files);
        if (entries === null) {
          if (loose.length > 0) onFiles(loose);
          return;
        }
        void filesOfEntries(entries).then(
          (files) => files.length > 0 && onFiles(files),
          // A folder the browser cannot read (permissions, gone meanwhile): at least the loose files.
          () => loose.length > 0 && onFiles(loose),
        );
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
 * The page's <input type=file>s, visually hidden: one for files, one for a
 * folder (`webkitdirectory`, each file naming its path in the folder);
 * visible buttons call click() on them so the pickers open from the keyboard too.
 */
export function HiddenFileInput({ ref, onFiles, folder = false }: { ref: Ref<HTMLInputElement>; onFiles: (files: PickedFile[]) => void; folder?: boolean }) {
  return (
    <input
      ref={ref}
      type="file"
      multiple
      className="sr-only"
      tabIndex={-1}
      aria-label={folder ? 'Choose a folder to upload' : 'Choose files to upload'}
      {...(folder ? { webkitdirectory: '' } : {})}
      onChange={(event) => {
        const files = pickedFiles(event.target.files ?? []);
        if (files.length > 0) onFiles(files);
        event.target.value = '';
      }}
    />
  );
}
