import type { ReactNode } from 'react';
import { Link } from './link';
import { AccountMenu } from './account-menu';
import { Icon, type IconName } from './icons';
import { StorageMeter } from './storage-meter';

const NAV: { to: string; label: string; icon: IconName; match: (path: string) => boolean }[] = [
  { to: '/buckets', label: 'Buckets', icon: 'bucket', match: (p) => p === '/buckets' || p.startsWith('/buckets/') },
  { to: '/usage', label: 'Usage', icon: 'chart', match: (p) => p === '/usage' },
  { to: '/sdk', label: 'SDK', icon: 'code', match: (p) => p === '/sdk' },
  { to: '/audit', label: 'Audit log', icon: 'info', match: (p) => p === '/audit' },
];

export function Brand() {
  return (
    <span className="brand">
      <span className="brand-mark" aria-hidden="true">
        <Icon name="bucket" size={18} />
      </span>
      <span className="brand-name">Pail</span>
    </span>
  );
}

export function AppLayout({ path, children }: { path: string; children: ReactNode }) {
  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link to="/buckets" className="brand-link" aria-label="Pail home">
            <Brand />
          </Link>
          <nav className="nav" aria-label="Main">
            {NAV.map((item) => {
              const active = item.match(path);
              return (
                <Link key={item.to} to={item.to} className="nav-link" aria-current={active ? 'page' : undefined}>
                  <Icon name={item.icon} />
                  <span>{item.label}</span>
                </Link>
              );
            })}
          </nav>
          <StorageMeter />
          <AccountMenu />
        </div>
      </header>
      <main id="main" className="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

export function PageHeader({ title, description, actions, eyebrow }: { title: ReactNode; description?: ReactNode; actions?: ReactNode; eyebrow?: ReactNode }) {
  return (
    <div className="page-header">
      <div className="page-header-text">
        {eyebrow ? <div className="eyebrow">{eyebrow}</div> : null}
        <h1 className="page-title" tabIndex={-1}>
          {title}
        </h1>
        {description ? <p className="page-description">{description}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </div>
  );
}
