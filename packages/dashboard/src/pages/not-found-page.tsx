import { useEffect } from 'react';
import { Icon } from '../components/icons';
import { Link } from '../components/link';
import { EmptyState } from '../components/states';

export function NotFoundPage() {
  useEffect(() => {
    document.title = 'Not found · Pail';
  }, []);
  return (
    <div className="page">
      <h1 className="sr-only" tabIndex={-1}>
        Page not found
      </h1>
      <EmptyState
        icon="search"
        title="This page does not exist"
        action={
          <Link to="/buckets" className="btn btn-primary">
            <Icon name="bucket" /> Go to your buckets
          </Link>
        }
      >
        <p>The address may be mistyped, or the page has moved.</p>
      </EmptyState>
    </div>
  );
}
