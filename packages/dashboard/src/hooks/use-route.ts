import { useSyncExternalStore } from 'react';
import { currentLocation, matchRoute, subscribe, type Route } from '../lib/router';

export function useLocation(): string {
  return useSyncExternalStore(subscribe, currentLocation);
}

export function useRoute(): Route {
  const location = useLocation();
  return matchRoute(location.split('?')[0] ?? '/');
}
