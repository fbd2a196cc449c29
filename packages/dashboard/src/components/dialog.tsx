/**
 * A modal built on the native <dialog>: showModal() gives focus trapping,
 * Escape to close and an inert background for free.
 */
import { useEffect, useId, useRef, type ReactNode } from 'react';
import { Icon } from './icons';

interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  /** `sheet`: a panel along the right edge (the whole screen on a phone). */
  size?: 'small' | 'large' | 'sheet';
  /** Prevents closing with Escape or the backdrop while something is running. */
  busy?: boolean;
}

export function Dialog({ open, title, onClose, children, footer, size = 'small', busy = false }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  // Closing the dialog returns focus to the element that opened it (native behaviour).
  return (
    <dialog
      ref={ref}
      className={`dialog dialog-${size}`}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onClose();
      }}
      onClick={(event) => {
        // A click on the backdrop lands on the <dialog> element itself.
        if (event.target === ref.current && !busy) onClose();
      }}
    >
      {open ? (
        <div className="dialog-inner">
          <header className="dialog-header">
            <h2 id={titleId} className="dialog-title">
              {title}
            </h2>
            <button type="button" className="btn btn-icon btn-ghost" aria-label="Close dialog" onClick={onClose} disabled={busy}>
              <Icon name="x" />
            </button>
          </header>
          <div className="dialog-body">{children}</div>
          {footer ? <footer className="dialog-footer">{footer}</footer> : null}
        </div>
      ) : null}
    </dialog>
  );
}
