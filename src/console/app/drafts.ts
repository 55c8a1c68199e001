/**
 * Unsaved input that survives a re-sign-in, a reload or a lost network: `useDraft(key, initial)`
 * is `useState` whose value is also kept in sessionStorage (this tab only, gone when it closes)
 * under the screen's path and `key`, until `clear()` (after a successful save).
 *
 *   const [name, setName, clearName] = useDraft('rename:' + collection._id, collection.name);
 */
import { useCallback, useState } from 'preact/hooks';

const PREFIX = 'sluice.draft:';

function storageKey(key: string): string {
  return `${PREFIX}${location.pathname}:${key}`;
}

function load<T>(key: string): T | undefined {
  const text = sessionStorage.getItem(storageKey(key));
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** Whether a draft is kept for `key` on this screen (e.g. to reopen the form it belongs to). */
export function hasDraft(key: string): boolean {
  return sessionStorage.getItem(storageKey(key)) !== null;
}

/** `[value, set, clear]` of the draft under `key` (this screen's path), starting from `initial` when none is kept. */
export function useDraft<T>(key: string, initial: T): [T, (value: T) => void, () => void] {
  const [value, setValue] = useState<T>(() => load<T>(key) ?? initial);
  const set = useCallback(
    (next: T) => {
      setValue(next);
      sessionStorage.setItem(storageKey(key), JSON.stringify(next));
    },
    [key],
  );
  const clear = useCallback(() => {
    sessionStorage.removeItem(storageKey(key));
    setValue(initial);
  }, [key, initial]);
  return [value, set, clear];
}
