import { folderFromQuery } from '../lib/folders';
import { useLocation } from './use-route';

/**
 * The folder the bucket page shows, kept in the URL (`?folder=photos%2F`) so
 * that back and forward, reloads and shared links all land in the same place.
 */
export function useCurrentFolder(): string {
  const location = useLocation();
  const queryStart = location.indexOf('?');
  return queryStart === -1 ? '' : folderFromQuery(location.slice(queryStart));
}
