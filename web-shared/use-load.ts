/** One request's state for a page (data, an error in words, loading) and a way to load it again. */
import { useCallback, useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (err: unknown) => live && setState((s) => ({ ...s, error: err instanceof Error ? err.message : String(err), loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}
