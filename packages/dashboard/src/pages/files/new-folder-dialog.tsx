import { useState, type FormEvent } from 'react';
import { filenameProblem } from '@pail/shared/names';
import { createFolder } from '../../api/buckets';
import { Dialog } from '../../components/dialog';
import { Field } from '../../components/field';
import { Icon } from '../../components/icons';
import { InlineError, Spinner } from '../../components/states';

interface Props {
  open: boolean;
  bucketId: number;
  /** The folder it is made in: `''` or a path ending in `/`. */
  parent: string;
  onClose: () => void;
  onCreated: (folder: string) => void;
}

const FORM_ID = 'new-folder-form';

/** `2026` in `photos/` → `photos/2026/`; a slash typed at the end is the user's way of saying "folder", not a second one. */
function folderToCreate(parent: string, name: string): string {
  return `${parent}${name.trim().replace(/\/+$/, '')}/`;
}

/** Why a name cannot be a folder here, in the shared filename rule's words, or null. */
function folderNameProblem(parent: string, name: string): string | null {
  if (name.trim().replace(/\/+$/, '') === '') return 'Give the folder a name';
  return filenameProblem(folderToCreate(parent, name))?.replace(/^Filename/, 'Folder name') ?? null;
}

/**
 * Asks for a name and makes the folder as an empty marker object (`photos/2026/`),
 * so it stays, and shows in the list, before anything is uploaded into it.
 */
export function NewFolderDialog({ open, bucketId, parent, onClose, onCreated }: Props) {
  const [name, setName] = useState('');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const problem = folderNameProblem(parent, name);
  const shownProblem = name.length > 0 || touched ? problem : null;

  const close = () => {
    if (busy) return;
    setName('');
    setTouched(false);
    setError(null);
    onClose();
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (problem) return;
    setBusy(true);
    setError(null);
    try {
      const folder = folderToCreate(parent, name);
      await createFolder(bucketId, folder);
      setBusy(false);
      setName('');
      setTouched(false);
      onCreated(folder);
    } catch (err) {
      setBusy(false);
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <Dialog
      open={open}
      title="New folder"
      onClose={close}
      busy={busy}
      footer={
        <>
          <button type="button" className="btn btn-secondary" onClick={close} disabled={busy}>
            Cancel
          </button>
          <button type="submit" form={FORM_ID} className="btn btn-primary" disabled={busy}>
            {busy ? <Spinner size={16} /> : <Icon name="folderPlus" />}
            Create folder
          </button>
        </>
      }
    >
      <form id={FORM_ID} className="form" onSubmit={(event) => void submit(event)} noValidate>
        <Field
          label="Folder name"
          name="folder-name"
          autoComplete="off"
          spellCheck={false}
          autoCapitalize="none"
          placeholder="e.g. invoices"
          value={name}
          error={shownProblem}
          hint={parent ? `Made inside ${parent}. A / in the name makes folders within folders.` : 'A / in the name makes folders within folders.'}
          onChange={(e) => setName(e.target.value)}
          onBlur={() => setTouched(true)}
          autoFocus
        />
        {error ? <InlineError>{error}</InlineError> : null}
      </form>
    </Dialog>
  );
}
