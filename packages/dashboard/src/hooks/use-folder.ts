import { useBrowseView } from './use-browse-view';

/**
 * The folder the bucket page shows, kept in the URL (`?folder=photos%2F`) so
 * that back and forward, reloads and shared links all land in the same place.
 */
export function useCurrentFolder(): string {
  return useBrowseView()[0].folder;
}
