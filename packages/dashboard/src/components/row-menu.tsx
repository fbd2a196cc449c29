/**
 * A row's "More actions" menu, as a native popover: it sits in the top layer
 * (never clipped by the table), closes on Escape or a click elsewhere, and is
 * placed under its button (or above it, near the bottom of the window).
 */
import { useEffect, useId, useRef, type KeyboardEvent } from 'react';
import { Icon, type IconName } from './icons';
import '../styles/file-operations.css';

export interface MenuAction {
  label: string;
  icon: IconName;
  onSelect: () => void;
  danger?: boolean;
}

export function RowMenu({ label, actions }: { label: string; actions: MenuAction[] }) {
  const id = useId();
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const followers = useRef<AbortController | null>(null);

  const place = () => {
    const anchor = button.current?.getBoundingClientRect();
    const panel = menu.current;
    if (!anchor || !panel) return;
    const below = anchor.bottom + 4;
    const fitsBelow = below + panel.offsetHeight <= window.innerHeight - 8;
    panel.style.top = `${fitsBelow ? below : Math.max(8, anchor.top - 4 - panel.offsetHeight)}px`;
    panel.style.left = `${Math.max(8, Math.min(anchor.right - panel.offsetWidth, window.innerWidth - panel.offsetWidth - 8))}px`;
  };

  useEffect(() => () => followers.current?.abort(), []);

  const items = () => [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])];

  const onKeyDown = (event: KeyboardEvent) => {
    const list = items();
    const at = list.indexOf(document.activeElement as HTMLButtonElement);
    const step = event.key === 'ArrowDown' ? 1 : event.key === 'ArrowUp' ? -1 : 0;
    if (step !== 0) {
      event.preventDefault();
      list[(at + step + list.length) % list.length]?.focus();
    } else if (event.key === 'Home' || event.key === 'End') {
      event.preventDefault();
      list[event.key === 'Home' ? 0 : list.length - 1]?.focus();
    } else if (event.key === 'Tab') {
      menu.current?.hidePopover();
    }
  };

  return (
    <>
      <button ref={button} type="button" className="btn btn-ghost btn-icon" aria-label={label} title="More actions" aria-haspopup="menu" popoverTarget={id}>
        <Icon name="more" />
      </button>
      <div
        ref={menu}
        id={id}
        popover="auto"
        role="menu"
        aria-label={label}
        className="row-menu"
        onKeyDown={onKeyDown}
        onToggle={(event) => {
          // While open, the menu follows its button when the page scrolls or the window changes size.
          if (event.newState !== 'open') {
            followers.current?.abort();
            return;
          }
          place();
          items()[0]?.focus();
          followers.current?.abort();
          followers.current = new AbortController();
          window.addEventListener('resize', place, { signal: followers.current.signal });
          window.addEventListener('scroll', place, { signal: followers.current.signal, capture: true, passive: true });
        }}
      >
        {actions.map((action) => (
          <button
            key={action.label}
            type="button"
            role="menuitem"
            className={`row-menu-item${action.danger ? ' row-menu-danger' : ''}`}
            onClick={() => {
              // Focus goes back to the button first, so a dialog the action opens returns it there.
              button.current?.focus();
              menu.current?.hidePopover();
              action.onSelect();
            }}
          >
            <Icon name={action.icon} size={16} />
            {action.label}
          </button>
        ))}
      </div>
    </>
  );
}
