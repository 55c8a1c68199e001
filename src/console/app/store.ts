/**
 * A value that components can watch: `createStore(initial)` → `{get, set, subscribe}`, and
 * `useStore(store)` re-renders the component when the value changes. For the few app-wide states
 * (the network banner, the signed-in user and contracts); screens keep their own state in hooks.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Store<T> {
  get(): T;
  set(value: T): void;
  subscribe(listener: (value: T) => void): () => void;
}

/** A store holding `initial`; `set` tells every subscriber. */
export function createStore<T>(initial: T): Store<T> {
  let value = initial;
  const listeners = new Set<(value: T) => void>();
  return {
    get: () => value,
    set(next) {
      value = next;
      for (const listener of [...listeners]) listener(value);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The store's current value; the component re-renders when it changes. */
export function useStore<T>(store: Store<T>): T {
  const [value, setValue] = useState(store.get());
  useEffect(() => {
    setValue(store.get());
    return store.subscribe(setValue);
  }, [store]);
  return value;
}
