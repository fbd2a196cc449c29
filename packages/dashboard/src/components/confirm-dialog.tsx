import { useState, type ReactNode } from 'react';
import { Dialog } from './dialog';
import { InlineError, Spinner } from './states';

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  /** Holds the confirm button back until the user has done what the dialog asks (e.g. typed a name). */
  confirmDisabled?: boolean;
  /** `danger` (the default) for what destroys, `primary` for what is only worth a second look. */
  tone?: 'danger' | 'primary';
}

/** Asks before something destructive; stays open and shows the error if it fails. */
export function ConfirmDialog({ open, title, children, confirmLabel, onConfirm, onClose, confirmDisabled = false, tone = 'danger' }: ConfirmDialogProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const close = () => {
    if (busy) return;
    setError(null);
    onClose();
  };

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setBusy(false);
      onClose();
    } catch (err) {
      setBusy(false);
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <Dialog
      open={open}
      title={title}
      onClose={close}
      busy={busy}
      footer={
        <>
          <button type="button" className="btn btn-secondary" onClick={close} disabled={busy}>
            Cancel
          </button>
          <button type="button" className={`btn btn-${tone}`} onClick={() => void confirm()} disabled={busy || confirmDisabled}>
            {busy ? <Spinner size={16} /> : null}
            {confirmLabel}
          </button>
        </>
      }
    >
      {children}
      {error ? <InlineError>{error}</InlineError> : null}
    </Dialog>
  );
}
