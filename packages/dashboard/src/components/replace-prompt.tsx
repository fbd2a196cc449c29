/**
 * Asks before an upload replaces a file of the same name: Replace, Keep both
 * (the new one under `name (1).ext`), or Skip. With several clashes in one
 * drop, the choice can be applied to all the rest at once.
 */
import { useState } from 'react';
import { Dialog } from './dialog';

export type ReplaceChoice = 'replace' | 'keep-both' | 'skip';

export interface Clash {
  /** The name the file would be stored under. */
  name: string;
  bucketName: string;
  /** How many more clashes wait after this one. */
  more: number;
}

interface Props {
  clash: Clash | null;
  onChoose: (choice: ReplaceChoice, forAll: boolean) => void;
}

export function ReplacePrompt({ clash, onChoose }: Props) {
  const [forAll, setForAll] = useState(false);
  const choose = (choice: ReplaceChoice) => {
    onChoose(choice, forAll);
    setForAll(false);
  };
  return (
    <Dialog
      open={clash !== null}
      title="Replace file?"
      onClose={() => choose('skip')}
      footer={
        <>
          <button type="button" className="btn btn-secondary" onClick={() => choose('skip')}>
            Skip
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
      {clash ? (
        <>
          <p>
            <strong>{clash.name}</strong> already exists in {clash.bucketName}. Replace it, keep both (the new one gets a number), or skip this file?
          </p>
          {clash.more > 0 ? (
            <label className="check">
              <input type="checkbox" checked={forAll} onChange={(event) => setForAll(event.target.checked)} />
              <span>
                Do the same for the other {clash.more} {clash.more === 1 ? 'file' : 'files'} with names already taken
              </span>
            </label>
          ) : null}
        </>
      ) : null}
    </Dialog>
  );
}
