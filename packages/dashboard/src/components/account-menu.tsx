import { useEffect, useId, useRef, useState } from 'react';
import { useSession } from '../hooks/session';
import { useToast } from '../hooks/toast';
import { navigate } from '../lib/router';
import { Icon } from './icons';
import { Spinner } from './states';

/** A disclosure: the button opens a small panel with the account and "Log out". */
export function AccountMenu() {
  const { user, signOut } = useSession();
  const { notify } = useToast();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const panelId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        setOpen(false);
        buttonRef.current?.focus();
      }
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  if (!user) return null;
  const initial = user.email.charAt(0).toUpperCase();

  const logOut = async () => {
    setBusy(true);
    try {
      await signOut();
      navigate('/login', { replace: true });
      notify('You are logged out', 'info');
    } catch {
      notify('Logged out on this device; the server could not be reached.', 'info');
      navigate('/login', { replace: true });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="account" ref={rootRef}>
      <button
        ref={buttonRef}
        type="button"
        className="account-button"
        aria-expanded={open}
        aria-controls={panelId}
        aria-label={`Account menu (${user.email})`}
        onClick={() => setOpen((v) => !v)}
      >
        <span className="avatar" aria-hidden="true">
          {initial}
        </span>
        <span className="account-email">{user.email}</span>
        <Icon name="chevronDown" size={16} />
      </button>
      <div id={panelId} className="account-panel" hidden={!open}>
        <div className="account-panel-head">
          <span className="account-panel-email">{user.email}</span>
          <span className="plan-pill">{user.plan} plan</span>
        </div>
        <button type="button" className="account-item" onClick={() => void logOut()} disabled={busy}>
          {busy ? <Spinner size={16} /> : <Icon name="logout" />}
          Log out
        </button>
      </div>
    </div>
  );
}
