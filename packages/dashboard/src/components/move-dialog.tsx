/**
 * Move files and folders to another folder, in this bucket or another of the
 * owner's: pick the destination, then each one moves through `POST …/move`
 * with progress, a name already taken asks first, and the result is counted
 * in files ("Moved 100 files to archive/2026/").
 */
import { useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { useMove, MoveFailed, type MoveOutcome } from '../hooks/use-move';
import { describeEntries, nameIn, ownName, parentOf, type Entry } from '../lib/entries';
import { Dialog } from './dialog';
import { FolderPicker, type Destination } from './folder-picker';
import { MoveConflictPrompt } from './move-conflict-prompt';
import { ProgressBar } from './progress-bar';
import { InlineError, Spinner } from './states';
import '../styles/file-operations.css';

interface Props {
  bucket: StorageBucket;
  /** What to move; null: the dialog is closed. */
  entries: readonly Entry[] | null;
  /** The folder they are shown in, where the picker starts. */
  folder: string;
  onClose: () => void;
  /** After any move landed (also one that stopped part-way), so the list can refresh. */
  onMoved: (outcome: MoveOutcome, destination: Destination) => void;
}

export function MoveDialog({ bucket, entries, folder, onClose, onMoved }: Props) {
  const [destination, setDestination] = useState<Destination>({ bucket, folder });
  const [error, setError] = useState<string | null>(null);
  const move = useMove();
  const busy = move.progress !== null;

  // Each opening starts where the user is (state adjusted while rendering, as React advises for a prop change).
  const [openedFor, setOpenedFor] = useState(entries);
  if (entries !== openedFor) {
    setOpenedFor(entries);
    if (entries) {
      setDestination({ bucket, folder });
      setError(null);
    }
  }

  const list = entries ?? [];
  const sameBucket = destination.bucket.id === bucket.id;
  const movedFolders = list.filter((e) => e.kind === 'folder').map((e) => e.name);
  const intoItself = (target: string) => sameBucket && movedFolders.some((f) => target.startsWith(f));
  const problem = intoItself(destination.folder)
    ? 'A folder cannot move into itself.'
    : sameBucket && list.every((e) => parentOf(e) === destination.folder)
      ? `${list.length === 1 ? 'It is' : 'They are'} already in this folder.`
      : null;
  const where = `${destination.bucket.name}/${destination.folder}`;

  const submit = async () => {
    setError(null);
    const plan = list.map((entry) => ({ from: entry.name, to: nameIn(entry, destination.folder) }));
    try {
      const outcome = await move.run(bucket.id, plan, destination.bucket.id);
      onMoved(outcome, destination);
      onClose();
    } catch (err) {
      if (err instanceof MoveFailed) {
        if (err.outcome.moved > 0) onMoved(err.outcome, destination);
        setError(err.outcome.moved > 0 ? `${err.outcome.moved} ${err.outcome.moved === 1 ? 'file' : 'files'} moved, then: ${err.message}` : err.message);
      } else setError(err instanceof Error ? err.message : String(err));
    }
  };

  const title = list.length === 1 ? `Move “${ownName(list[0] as Entry)}”` : `Move ${describeEntries(list)}`;
  return (
    <>
      <Dialog
        open={entries !== null}
        title={title}
        onClose={onClose}
        busy={busy}
        footer={
          <>
            <button type="button" className="btn btn-secondary" onClick={onClose} disabled={busy}>
              Cancel
            </button>
            <button type="button" className="btn btn-primary" onClick={() => void submit()} disabled={busy || problem !== null}>
              {busy ? <Spinner size={16} /> : null}
              Move here
            </button>
          </>
        }
      >
        {entries ? (
          <>
            <FolderPicker value={destination} onChange={setDestination} blocked={intoItself} />
            <p className="move-target">
              To <strong>{where}</strong>
            </p>
            {problem ? <p className="field-hint">{problem}</p> : null}
          </>
        ) : null}
        {move.progress ? (
          <div className="move-progress" aria-live="polite">
            <ProgressBar
              value={move.progress.done}
              max={move.progress.total}
              label="Moving"
              valueText={`${move.progress.done} of ${move.progress.total}`}
              indeterminate={move.progress.total === 1}
            />
            <p>
              Moving {move.progress.total > 1 ? `${move.progress.done + 1} of ${move.progress.total}: ` : ''}
              {move.progress.current}…
            </p>
          </div>
        ) : null}
        {error ? <InlineError>{error}</InlineError> : null}
      </Dialog>
      <MoveConflictPrompt conflict={move.conflict} bucketName={destination.bucket.name} onChoose={move.choose} />
    </>
  );
}

/** "Moved 100 files to archive/2026/", and what was left out. */
export function movedMessage(outcome: MoveOutcome, where: string): string {
  const moved = `Moved ${outcome.moved.toLocaleString()} ${outcome.moved === 1 ? 'file' : 'files'} to ${where}`;
  return outcome.skipped > 0 ? `${moved}; ${outcome.skipped} left where ${outcome.skipped === 1 ? 'it was' : 'they were'}` : moved;
}
