import { useCallback, useEffect, useRef, useState, type DependencyList } from 'react';

export interface AsyncState<T> {
  data: T | undefined;
  error: Error | undefined;
  /** True while the first load (or a load after an error) is running. */
  loading: boolean;
  /** True while any load is running, including a background refresh. */
  refreshing: boolean;
  reload: () => void;
  setData: (update: (current: T | undefined) => T | undefined) => void;
}

/**
 * Runs `load` when `deps` change and on reload(). Older responses are ignored
 * (their request is aborted), and data stays visible during a refresh so the
 * page does not flash back to a spinner.
 */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): AsyncState<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [running, setRunning] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const lastTick = useRef(tick);

  useEffect(() => {
    const controller = new AbortController();
    // New inputs (not a reload): forget the previous answer, it belongs to something else.
    if (lastTick.current === tick) {
      setDataState(undefined);
      setError(undefined);
    }
    lastTick.current = tick;
    setRunning(true);
    loadRef
      .current(controller.signal)
      .then((value) => {
        if (controller.signal.aborted) return;
        setDataState(value);
        setError(undefined);
      })
      .catch((err: unknown) => {
        if (controller.signal.aborted) return;
        setError(err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        if (!controller.signal.aborted) setRunning(false);
      });
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the caller's deps, checked at each useAsync call (additionalHooks), plus tick
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((update: (current: T | undefined) => T | undefined) => setDataState(update), []);

  return {
    data,
    error,
    loading: running && (data === undefined || error !== undefined),
    refreshing: running,
    reload,
    setData,
  };
}
