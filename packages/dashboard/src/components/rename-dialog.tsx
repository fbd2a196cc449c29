/**
 * Rename a file or a folder in place: a move to a new name in the same
 * folder, so a folder's files all follow it, and a name already taken asks
 * first. The name is selected up to its extension, as file managers do.
 */
import { useEffect, useRef, useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { MoveFailed, useMove, type MoveOutcome } from '../hooks/use-move';
import { newNameProblem, ownName, renamed, type Entry } from '../lib/entries';
import { Dialog } from './dialog';
import { MoveConflictPrompt } from './move-conflict-prompt';
import { InlineError, Spinner } from './states';

interface Props {
  bucket: StorageBucket;
  entry: Entry | null;
  onClose: () => void;
  onRenamed: (outcome: MoveOutcome, entry: Entry, newName: string) => void;
}

export function RenameDialog({ bucket, entry, onClose, onRenamed }: Props) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [openedFor, setOpenedFor] = useState(entry);
  const input = useRef<HTMLInputElement>(null);
  const move = useMove();
  const busy = move.progress !== null;

  if (entry !== openedFor) {
    setOpenedFor(entry);
    setName(entry ? ownName(entry) : '');
    setError(null);
  }

  // Select the name without its extension, so typing replaces just that.
  useEffect(() => {
    const field = input.current;
    if (!entry || !field) return;
    const dot = entry.kind === 'file' ? field.value.lastIndexOf('.') : -1;
    field.focus();
    field.setSelectionRange(0, dot > 0 ? dot : field.value.length);
  }, [entry]);

  const problem = entry ? newNameProblem(entry, name) : null;
  const unchanged = entry !== null && name.trim() === ownName(entry);

  const submit = async () => {
    if (!entry || problem || unchanged) return;
    setError(null);
    const newName = name.trim();
    try {
      const outcome = await move.run(bucket.id, [{ from: entry.name, to: renamed(entry, newName) }]);
      // Cancel at "name taken": back to the name, to choose another.
      if (outcome.skipped > 0) return;
      onRenamed(outcome, entry, newName);
      onClose();
    } catch (err) {
      setError(err instanceof MoveFailed || err instanceof Error ? err.message : String(err));
    }
  };

  const kind = entry?.kind === 'folder' ? 'folder' : 'file';
  return (
    <>
      <Dialog
        open={entry !== null}
        title={entry ? `Rename ${kind} “${ownName(entry)}”` : 'Rename'}
        onClose={onClose}
        busy={busy}
        footer={
          <>
            <button type="button" className="btn btn-secondary" onClick={onClose} disabled={busy}>
              Cancel
            </button>
            <button type="submit" form="rename-form" className="btn btn-primary" disabled={busy || problem !== null || unchanged}>
              {busy ? <Spinner size={16} /> : null}
              Rename
            </button>
          </>
        }
      >
        <form
          id="rename-form"
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <div className="field">
            <label className="field-label" htmlFor="rename-name">
              New name
            </label>
            <input
              ref={input}
              id="rename-name"
              className="input"
              value={name}
              autoComplete="off"
              spellCheck={false}
              aria-invalid={problem ? true : undefined}
              aria-describedby={problem ? 'rename-problem' : undefined}
              onChange={(event) => setName(event.target.value)}
            />
            {problem ? <InlineError id="rename-problem">{problem}</InlineError> : null}
            {entry?.kind === 'folder' ? <p className="field-hint">Everything in the folder moves with it.</p> : null}
          </div>
        </form>
        {error ? <InlineError>{error}</InlineError> : null}
      </Dialog>
      <MoveConflictPrompt conflict={move.conflict} bucketName={bucket.name} onChoose={move.choose} />
    </>
  );
}
