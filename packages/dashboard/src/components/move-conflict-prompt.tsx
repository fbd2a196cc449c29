/**
 * Asks what to do when a move's new name is taken: Replace, Keep both (the
 * moved one gets a number) or Cancel (it stays where it is), as the upload
 * prompt does; with more moves waiting, the choice can go for them too.
 */
import { useState } from 'react';
import type { ConflictChoice, MoveConflict } from '../hooks/use-move';
import { Dialog } from './dialog';

export function MoveConflictPrompt({
  conflict,
  bucketName,
  onChoose,
}: {
  conflict: MoveConflict | null;
  bucketName: string;
  onChoose: (choice: ConflictChoice, forAll: boolean) => void;
}) {
  const [forAll, setForAll] = useState(false);
  const choose = (choice: ConflictChoice) => {
    onChoose(choice, forAll);
    setForAll(false);
  };
  return (
    <Dialog
      open={conflict !== null}
      title={conflict?.folder ? 'Merge into the folder there?' : 'Replace file?'}
      onClose={() => choose('cancel')}
      footer={
        <>
          <button type="button" className="btn btn-secondary" onClick={() => choose('cancel')}>
            {conflict && conflict.more > 0 ? 'Skip' : 'Cancel'}
          </button>
          <button type="button" className="btn btn-secondary" onClick={() => choose('keep-both')}>
            Keep both
          </button>
          <button type="button" className="btn btn-primary" onClick={() => choose('replace')}>
            Replace
          </button>
        </>
      }
    >
      {conflict ? (
        <>
          <p>
            {conflict.folder ? (
              <>
                <strong>{conflict.name}</strong> in {bucketName} already holds files with the same names. Replace them (the folders merge), keep both (the moved
                folder gets a number), or {conflict.more > 0 ? 'skip this folder' : 'cancel'}?
              </>
            ) : (
              <>
                <strong>{conflict.name}</strong> already exists in {bucketName}. Replace it, keep both (the moved file gets a number), or{' '}
                {conflict.more > 0 ? 'skip this file' : 'cancel'}?
              </>
            )}
          </p>
          {conflict.more > 0 ? (
            <label className="check">
              <input type="checkbox" checked={forAll} onChange={(event) => setForAll(event.target.checked)} />
              <span>Do the same for the other {conflict.more} if their names are taken</span>
            </label>
          ) : null}
        </>
      ) : null}
    </Dialog>
  );
}
