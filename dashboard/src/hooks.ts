/** The hash route, and the shared loading and action state (web-shared/). */
import { useEffect, useState } from 'preact/hooks';

export { useLoad, type Loaded } from '../../web-shared/use-load.ts';

/** The hash route: `#/path?query`. */
export function useRoute(): { path: string[]; params: URLSearchParams } {
  const read = () => {
    const hash = location.hash.replace(/^#\/?/, '');
    const [path = '', search = ''] = hash.split('?', 2);
    return { path: path.split('/').filter((p) => p !== '').map(decodeURIComponent), params: new URLSearchParams(search) };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function navigate(path: string, params: Record<string, string | undefined> = {}): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  location.hash = `#/${path}${s === '' ? '' : `?${s}`}`;
}

/** Runs an admin call, keeping its error in words. */
export { useAction } from '../../web-shared/ui.tsx';
