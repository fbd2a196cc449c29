import { useEffect, useRef } from 'react';
import { AppLayout } from './components/layout';
import { UploadTray } from './components/upload-tray';
import { Loading } from './components/states';
import { useSession } from './hooks/session';
import { UploadQueueProvider } from './hooks/upload-queue';
import { useLocation, useRoute } from './hooks/use-route';
import { navigate, type Route } from './lib/router';
import { AuthPage } from './pages/auth-page';
import { BucketsPage } from './pages/buckets/buckets-page';
import { BucketPage } from './pages/files/bucket-page';
import { TrashPage } from './pages/trash/trash-page';
import { NotFoundPage } from './pages/not-found-page';
import { SdkPage } from './pages/sdk/sdk-page';
import { UsagePage } from './pages/usage/usage-page';
import { AuditPage } from './pages/audit/audit-page';
import { WebhooksPage } from './pages/webhooks/webhooks-page';

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

/** After an in-app navigation, move focus to the new page's heading for screen readers and keyboards. */
function useFocusOnNavigate(path: string) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const frame = requestAnimationFrame(() => {
      const target = document.querySelector<HTMLElement>('main h1, .auth h1') ?? document.querySelector<HTMLElement>('main');
      target?.focus({ preventScroll: true });
      window.scrollTo(0, 0);
    });
    return () => cancelAnimationFrame(frame);
  }, [path]);
}

/** Where to go after logging in: the page that asked for it, if it is one of ours. */
function nextPath(): string {
  const next = new URLSearchParams(window.location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/buckets';
}

function SignedInPage({ route }: { route: Route }) {
  switch (route.name) {
    case 'buckets':
      return <BucketsPage />;
    case 'bucket':
      return <BucketPage key={route.bucketId} bucketId={route.bucketId} />;
    case 'trash':
      return <TrashPage key={route.bucketId} bucketId={route.bucketId} />;
    case 'usage':
      return <UsagePage />;
    case 'sdk':
      return <SdkPage />;
    case 'webhooks':
      return <WebhooksPage key={route.bucketId} bucketId={route.bucketId} />;
    case 'audit':
      return <AuditPage />;
    case 'home':
    case 'login':
    case 'signup':
      return <Redirect to={route.name === 'home' ? '/buckets' : nextPath()} />;
    case 'not-found':
      return <NotFoundPage />;
  }
}

export function App() {
  const { status } = useSession();
  const location = useLocation();
  const route = useRoute();
  const path = location.split('?')[0] ?? '/';
  useFocusOnNavigate(path);

  if (status === 'checking') {
    return (
      <div className="boot">
        <Loading label="Loading Pail…" />
      </div>
    );
  }

  if (status === 'signed-out') {
    if (route.name === 'login' || route.name === 'signup') return <AuthPage mode={route.name} />;
    const next = route.name === 'home' ? '' : `?next=${encodeURIComponent(location)}`;
    return <Redirect to={`/login${next}`} />;
  }

  return (
    <UploadQueueProvider>
      <AppLayout path={path}>
        <SignedInPage route={route} />
      </AppLayout>
      <UploadTray />
    </UploadQueueProvider>
  );
}
