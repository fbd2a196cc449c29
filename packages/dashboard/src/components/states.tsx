/** Loading, empty and error states, used the same way on every page. */
import type { ReactNode } from 'react';
import { Icon, type IconName } from './icons';

export function Spinner({ size = 18 }: { size?: number }) {
  return <span className="spinner" style={{ width: size, height: size }} aria-hidden="true" />;
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <Spinner size={22} />
      <span>{label}</span>
    </div>
  );
}

export function EmptyState({ icon, title, children, action }: { icon: IconName; title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="state state-empty">
      <div className="state-icon">
        <Icon name={icon} size={26} />
      </div>
      <h3 className="state-title">{title}</h3>
      {children ? <div className="state-body">{children}</div> : null}
      {action ? <div className="state-action">{action}</div> : null}
    </div>
  );
}

export function ErrorState({ error, onRetry, title = 'Something went wrong' }: { error: Error; onRetry?: () => void; title?: string }) {
  return (
    <div className="state state-error" role="alert">
      <div className="state-icon">
        <Icon name="alert" size={26} />
      </div>
      <h3 className="state-title">{title}</h3>
      <p className="state-body">{error.message}</p>
      {onRetry ? (
        <div className="state-action">
          <button type="button" className="btn btn-secondary" onClick={onRetry}>
            <Icon name="refresh" /> Try again
          </button>
        </div>
      ) : null}
    </div>
  );
}

export function InlineError({ id, children }: { id?: string; children: ReactNode }) {
  return (
    <p className="inline-error" id={id} role="alert">
      <Icon name="alert" size={16} />
      <span>{children}</span>
    </p>
  );
}
