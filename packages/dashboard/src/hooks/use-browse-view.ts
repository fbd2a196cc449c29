import { useCallback } from 'react';
import { queryOf, viewFromQuery, type BrowseView } from '../lib/browse-view';
import { navigate } from '../lib/router';
import { useLocation } from './use-route';

/**
 * The bucket page's view (folder, search, sort, page) from the URL, and a
 * way to change it. A change that starts a new list (another search, sort or
 * folder) goes back to the first page.
 */
export function useBrowseView(): [BrowseView, (change: Partial<BrowseView>, options?: { replace?: boolean }) => void] {
  const location = useLocation();
  const queryStart = location.indexOf('?');
  const pathname = queryStart === -1 ? location : location.slice(0, queryStart);
  const view = viewFromQuery(queryStart === -1 ? '' : location.slice(queryStart));
  const viewKey = queryOf(view);

  const change = useCallback(
    (next: Partial<BrowseView>, options: { replace?: boolean } = {}) => {
      const current = viewFromQuery(viewKey);
      const samePages = next.cursor !== undefined || next.page !== undefined;
      const merged = { ...current, ...next, ...(samePages ? {} : { cursor: null, page: 1 }) };
      navigate(`${pathname}${queryOf(merged)}`, options);
    },
    [pathname, viewKey],
  );
  return [view, change];
}
